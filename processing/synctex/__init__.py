"""SyncTeX: parsing a LaTeX build's ``.synctex.gz`` (``parser``) and reading it for a caller who may see the build
or the project's output (``lookups``). The routes are in ``processing/api/synctex.py``."""
