/** The `--…` words of the start script in `root`/package.json. */
export declare const startFlags: (root: string) => ReadonlyArray<string>
