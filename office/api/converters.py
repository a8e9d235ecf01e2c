"""URL converter for the path of an Office file inside a project.

``files/<office_path:path>/preview.pdf`` claims only paths whose file part has an
Office extension, so ``notes/preview.pdf`` (a real file) still reaches the
generic file route that follows it.
"""

from office.engine import FORMATS


def _any_case(word: str) -> str:
    # Character classes rather than an inline (?i) flag: the pattern is also published in OpenAPI.
    return "".join(f"[{char.lower()}{char.upper()}]" for char in word)


class OfficePathConverter:
    regex = r".+\.(?:" + "|".join(_any_case(extension.lstrip(".")) for extension in FORMATS) + ")"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value
