// Registry packages (`#import "@preview/cetz:0.3.0"`): the build refuses a project that names one, before
// compiling (worker/src/quire_worker/processors/typst/compilation.py, registry_packages and
// refuse_registry_packages); the preview finds them the same way and says the same words, at the same lines.
const PACKAGE_SPEC = /"(@[a-z0-9][a-z0-9_-]*\/[a-z0-9][a-z0-9_-]*(?::[0-9][0-9A-Za-z.+-]*)?)"/g;

export function registryPackageUses(path, text) {
  const uses = [];
  text.split(/\r\n|\r|\n/).forEach((line, index) => {
    if (line.trimStart().startsWith("//")) return;
    for (const match of line.matchAll(PACKAGE_SPEC)) {
      uses.push({
        path,
        line: index + 1,
        column: match.index,
        length: match[0].length,
        spec: match[1],
        message: `imports the registry package ${match[1]}, which the sandbox cannot fetch`,
      });
    }
  });
  return uses;
}
