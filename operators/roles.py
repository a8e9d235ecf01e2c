"""The two operator roles, as Django groups (created by migration 0002): both see every operations page in
admin; only the acting one may change anything. Members must also be staff users to reach admin."""

READ_ONLY_GROUP = "Operators (read-only)"
ACTING_GROUP = "Operators"
OPERATE_PERMISSION = "operators.operate"

# The apps whose admin pages operators read: every model's view permission goes to both groups.
VIEWED_APPS = ("processing", "library", "office", "operators")


def can_act(user) -> bool:
    return bool(user and user.is_active and user.is_staff and user.has_perm(OPERATE_PERMISSION))


def groups_grant(apps) -> None:
    """Create the two groups (if missing) and grant them what their role holds: every view permission of the
    viewed apps, and to the acting group the operate permission. Idempotent; ``apps`` is a migration's
    historical registry or the real one (after every migrate, so models added later are granted too)."""
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        if app_config.label in VIEWED_APPS:
            app_config.models_module = True  # a historical app config has none: create_permissions skips those
            create_permissions(app_config, verbosity=0, apps=apps)
    group_model = apps.get_model("auth", "Group")
    permission_model = apps.get_model("auth", "Permission")
    viewing = permission_model.objects.filter(content_type__app_label__in=VIEWED_APPS, codename__startswith="view_")
    operate = permission_model.objects.filter(content_type__app_label="operators", codename="operate")
    read_only, _ = group_model.objects.get_or_create(name=READ_ONLY_GROUP)
    acting, _ = group_model.objects.get_or_create(name=ACTING_GROUP)
    read_only.permissions.add(*viewing)
    acting.permissions.add(*viewing, *operate)
