"""Text the protocol carries: Core stores it in PostgreSQL, whose ``text`` holds neither U+0000 nor a lone
surrogate, and refuses either in a JSON body (``400 invalid_text``). A processor may emit both (a Typst
``#panic`` with a NUL, a LuaLaTeX log), so the agent replaces them before sending and says how many it replaced.
"""

import re

UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def storable(text: str) -> tuple[str, int]:
    """``text`` with each unstorable character replaced by U+FFFD, and how many were replaced."""
    return UNSTORABLE.subn(REPLACEMENT, text)
