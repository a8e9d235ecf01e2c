import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from access import selectors, services
from foundation.http.ui import form_action


@login_required
def tokens(request):
    created = None
    if request.method == "POST":
        name = (request.POST.get("name") or "").strip()[:100] or "token"
        _, created = services.token_create(user_id=request.user.pk, name=name)
    return render(
        request,
        "access/tokens.html",
        {"tokens": selectors.tokens_of(user_id=request.user.pk), "created": created},
    )


@login_required
@require_POST
def token_revoke(request, token_id: int):
    services.token_revoke(user_id=request.user.pk, token_id=token_id)
    messages.success(request, "Token revoked.")
    return redirect("access:tokens")


def _members_url(request, project_id, **_) -> str:
    return reverse("workspace:project-detail", args=[project_id]) + "?tab=members"


@login_required
@require_POST
@form_action(_members_url)
def member_set(request, project_id: uuid.UUID):
    services.member_set(
        actor_id=request.user.pk,
        project_id=project_id,
        username=request.POST.get("username", "").strip(),
        role=request.POST.get("role", ""),
    )
    messages.success(request, "Member saved.")
    return redirect(_members_url(request, project_id))


@login_required
@require_POST
@form_action(_members_url)
def member_remove(request, project_id: uuid.UUID):
    services.member_remove(actor_id=request.user.pk, project_id=project_id, username=request.POST.get("username", ""))
    messages.success(request, "Member removed.")
    return redirect(_members_url(request, project_id))
