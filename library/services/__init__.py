"""The library's writes, one module per concern: accepting a version (``acceptance``, with the PDF checks in
``pdf_checks``), the rows it writes (``documents``), and the indexing finalizer (``indexing``)."""
