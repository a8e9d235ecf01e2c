"""A child entry point that misbehaves on request, to prove how the runner judges a child.

``python -m tests.worker.misbehaving_child --input IN --output OUT --settings '{"act": ...}'``
"""

from quire_worker.processors.child_protocol import ChildArguments, child_main


def misbehave(arguments: ChildArguments) -> tuple[dict, ...]:
    act = arguments.settings["act"]
    if act == "spin":
        while True:
            pass
    if act == "crash":
        raise RuntimeError("a bug in the converter")
    if act == "hog":
        hoard = [bytearray(64 * 1024 * 1024) for _ in range(1024)]
        return ({"message": str(len(hoard))},)
    if act == "peek":
        return (_peek(arguments.settings["path"]),)
    if act == "flood":
        (arguments.output_dir / "flood.bin").write_bytes(b"x" * (4 * 1024 * 1024))
    return ()


def _peek(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as stream:
            return {"message": f"read: {stream.read()}"}
    except OSError as exc:
        return {"message": f"unreadable: {type(exc).__name__}"}


if __name__ == "__main__":
    raise SystemExit(child_main(misbehave))
