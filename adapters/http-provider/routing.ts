/**
 * One DenoiseProvider over several: each request goes to the provider that runs its model's
 * runner (the catalog says which: `builtin` → RNNoise on this machine, a GPU provider's name →
 * that provider). `providers` is the union of theirs.
 */
import { Context, Effect, Layer, Option } from "effect"
import { findModel, ModelCatalog } from "../../core/domain/catalog.js"
import { DenoiseProvider, ProviderFailure } from "../../core/ports/denoise-provider.js"

export const makeRoutingProviderService = (members: ReadonlyArray<DenoiseProvider["Type"]>) =>
  Effect.map(ModelCatalog, (catalog) => {
    const providers = [...new Set(members.flatMap((member) => member.providers))]
    return DenoiseProvider.of({
      providers,
      denoise: (request) => {
        const model = findModel(catalog, request.model)
        if (Option.isNone(model)) {
          return Effect.fail(new ProviderFailure({ message: `unknown model '${request.model}'`, retryable: false }))
        }
        const runner = model.value.runner
        const member = members.find((candidate) => candidate.providers.includes(runner))
        return member === undefined
          ? Effect.fail(new ProviderFailure({ message: `no provider of this deployment runs '${runner}' (model '${request.model}')`, retryable: false }))
          : member.denoise(request)
      }
    })
  })

/** The providers built side by side (each in the layer's scope) behind one router. */
export const layerRoutingProvider = <R>(
  members: ReadonlyArray<Layer.Layer<DenoiseProvider, never, R>>
): Layer.Layer<DenoiseProvider, never, R | ModelCatalog> =>
  Layer.scoped(DenoiseProvider, Effect.gen(function*() {
    const built = yield* Effect.forEach(members, (member) =>
      Effect.map(Layer.build(member), (context) => Context.get(context, DenoiseProvider)))
    return yield* makeRoutingProviderService(built)
  }))
