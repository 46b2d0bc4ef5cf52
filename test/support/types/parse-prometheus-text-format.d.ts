/** The package ships no types: its output is prom2json's (values as strings). */
declare module "parse-prometheus-text-format" {
  interface Sample {
    readonly labels?: Record<string, string>
    readonly value?: string
    /** Histograms: cumulative counts by upper bound (`"+Inf"` included). */
    readonly buckets?: Record<string, string>
    readonly count?: string
    readonly sum?: string
  }
  interface Family {
    readonly name: string
    readonly help: string
    readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED"
    readonly metrics: ReadonlyArray<Sample>
  }
  const parse: (text: string) => Array<Family>
  export default parse
}
