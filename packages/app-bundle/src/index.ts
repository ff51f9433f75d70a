export { type AppBundleOptions, AppBundleFailed, type AppEntry, bundleApp, shebang } from "./BundleApp.js"
export { externalsPlugin, type Manifest, packageOf, WORKSPACE_SCOPE } from "./Externals.js"
