"""The browser's live preview (typst.ts's web compiler, frontend/) and the worker's builds (the ``typst`` wheel)
run the same Typst release, so that the preview and the PDF agree. Each compiler is asked which Typst it is
(``sys.version`` inside a document), rather than trusting the version numbers of the packages around them.
"""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import typst

FRONTEND = Path(__file__).resolve().parents[2] / "frontend"
NODE = shutil.which("node")
PACKAGES = ("@myriaddreamin/typst.ts", "@myriaddreamin/typst-ts-web-compiler", "@myriaddreamin/typst-ts-renderer")
SYS_VERSION = "#metadata(str(sys.version)) <v>\n"

# typst.ts's compiler in Node, from the installed npm package; it needs no fonts to evaluate a document.
ASK_THE_WEB_COMPILER = """
import { readFileSync } from "node:fs";
import { createTypstCompiler } from "@myriaddreamin/typst.ts/compiler";
const wasm = readFileSync("node_modules/@myriaddreamin/typst-ts-web-compiler/pkg/typst_ts_web_compiler_bg.wasm");
const noFonts = async () => {};
noFonts._kind = "fontLoader";
noFonts._preloadRemoteFontOptions = { assets: false };
const compiler = createTypstCompiler();
await compiler.init({ beforeBuild: [noFonts], getModule: () => wasm });
compiler.addSource("/main.typ", process.argv[1]);
const found = await compiler.runWithWorld({ mainFilePath: "/main.typ" }, async (world) => {
  await world.compile();
  return world.query({ selector: "<v>", field: "value" });
});
process.stdout.write(JSON.stringify(found));
"""


def browser_typst_version() -> str:
    answer = subprocess.run(
        [NODE, "--input-type=module", "-e", ASK_THE_WEB_COMPILER, SYS_VERSION],
        cwd=FRONTEND,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    [version] = json.loads(answer.stdout)
    return version


def server_typst_version(tmp_path: Path) -> str:
    document = tmp_path / "version.typ"
    document.write_text(SYS_VERSION, encoding="utf-8")
    [version] = json.loads(typst.query(str(document), "<v>", field="value"))
    return version


@pytest.mark.skipif(NODE is None, reason="Node.js builds the bundle; without it there is no preview")
def test_the_preview_and_the_worker_run_the_same_typst_release(tmp_path):
    assert browser_typst_version() == server_typst_version(tmp_path)


def test_the_browser_packages_are_pinned_to_one_exact_version():
    """A range would let `npm install` move the preview to another Typst than the worker's pinned wheel."""
    declared = json.loads((FRONTEND / "package.json").read_text(encoding="utf-8"))["dependencies"]
    versions = {declared[name] for name in PACKAGES}
    assert len(versions) == 1 and versions.pop()[0].isdigit()
