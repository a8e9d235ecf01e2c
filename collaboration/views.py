import uuid
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from collaboration import services
from config.http.ui import form_action


def _document_url(request, project_id: uuid.UUID, **_) -> str:
    query = urlencode({"file": request.POST.get("path", "")})
    return f"{reverse('workspace:project-detail', args=[project_id])}?{query}"


@login_required
@require_POST
@form_action(_document_url)
def document_save(request, project_id: uuid.UUID):
    # Browsers send textarea line breaks as CRLF; documents keep the LF they were written with.
    text = request.POST.get("text", "").replace("\r\n", "\n")
    accepted = services.text_edit(
        actor_id=request.user.pk, project_id=project_id, path=request.POST.get("path", ""), text=text
    )
    messages.success(request, "Saved." if accepted.changed else "No changes to save.")
    return redirect(_document_url(request, project_id))
