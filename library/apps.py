from django.apps import AppConfig


class LibraryConfig(AppConfig):
    name = "library"

    def ready(self) -> None:
        """Plug the library into the contexts below it, which never import it: its tab on the project page,
        the finalizer of ``pdf.index.text/v1``, and its share of Processing's upkeep."""
        from library.services.acceptance import OPERATION
        from library.services.indexing import index_library_version
        from library.upkeep import upkeep_register
        from library.views import library_tab_register
        from processing import facade as processing

        library_tab_register()
        processing.finalizer_register(OPERATION, index_library_version)
        upkeep_register()
