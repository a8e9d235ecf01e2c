from django.apps import AppConfig


class OfficeConfig(AppConfig):
    name = "office"

    def ready(self) -> None:
        from office import metrics, receivers
        from processing import facade as processing
        from workspace import facade as workspace

        workspace.file_written.connect(receivers.file_written_prewarm, dispatch_uid="office-prewarm")
        metrics.collector_register()
        processing.alert_source_register(metrics.office_alerts)
