"""Cancel and retry on a selection: a page's ticks, or with "select all" every job the filter matches.

The operator confirms a count; then the jobs are read by id in batches of ``BULK_BATCH``, the selection's
filter applied again to each batch (so a job the batch before changed is not met twice), and each batch
commits with its share of the one audit row, never in one long transaction. The result says what happened
to each job.
"""

from collections import Counter

from django.contrib import admin, messages
from django.db import transaction
from django.template.response import TemplateResponse

from foundation.errors import QuireError
from operators import facade as operators
from processing.models import JobState
from processing.models.jobs import TERMINAL_STATES
from processing.queue.cancellation import job_cancel_by_operator
from processing.submission.manual_retry import job_retry_by_operator

BULK_BATCH = 200
REFUSALS_SHOWN = 20


def cancel_selection(model_admin, request, queryset):
    return _bulk(model_admin, request, queryset, "cancel_jobs", ("cancel", "Cancel"), operators.ActionKind.CANCEL)


def retry_selection(model_admin, request, queryset):
    return _bulk(model_admin, request, queryset, "retry_jobs", ("retry", "Retried"), operators.ActionKind.RETRY)


def _bulk(model_admin, request, queryset, action: str, words: tuple[str, str], kind):
    verb, done_word = words
    select_across = request.POST.get("select_across") == "1"
    if request.POST.get("confirmed") is None:
        return _confirmation(model_admin, request, queryset.count(), action, verb, select_across)
    subject = f"all jobs matching {request.GET.urlencode() or 'no filter'}" if select_across else "selected jobs"
    tally = operators.ActionTally(actor=request.user, action=_bulk_kind(kind, select_across), subject=subject)
    batch_run = _cancel_batch if kind == operators.ActionKind.CANCEL else _retry_batch
    last, refusals = None, []
    while batch := _next_batch(queryset, last):
        refusals += batch_run(batch, tally)
        last = batch[-1]
    tally.close()
    model_admin.message_user(request, f"{done_word}: {_outcome_words(tally)}.", messages.SUCCESS)
    if refusals:
        shown = "; ".join(refusals[:REFUSALS_SHOWN]) + (" …" if len(refusals) > REFUSALS_SHOWN else "")
        model_admin.message_user(request, f"Refused: {shown}", messages.WARNING)
    return None


def _confirmation(model_admin, request, count: int, action: str, verb: str, select_across: bool):
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "title": f"{verb.capitalize()} {count} jobs",
        "question": f"{verb.capitalize()} all {count} jobs {_selection_words(select_across)}?",
        "count": count,
        "verb": verb,
        "action": action,
        "batch": BULK_BATCH,
        "select_across": select_across,
        "selected": request.POST.getlist(admin.helpers.ACTION_CHECKBOX_NAME),  # Django admin needs them
        "query": request.GET.urlencode(),
        "filter_words": ", ".join(f"{key} = {value}" for key, value in request.GET.items()),
    }
    return TemplateResponse(request, "admin/processing/bulk_confirm.html", context)


def _selection_words(select_across: bool) -> str:
    return "this filter matches" if select_across else "you selected"


def _next_batch(queryset, after) -> list:
    ordered = queryset.order_by("pk")
    return list((ordered.filter(pk__gt=after) if after else ordered).values_list("pk", flat=True)[:BULK_BATCH])


def _bulk_kind(kind, select_across: bool):
    if not select_across:
        return kind
    return operators.ActionKind.BULK_CANCEL if kind == operators.ActionKind.CANCEL else operators.ActionKind.BULK_RETRY


def _cancel_batch(job_ids: list, tally) -> list[str]:
    with transaction.atomic():  # one batch: one short transaction, with its share of the audit record
        tally.add_counts(Counter(cancel_outcome(job_cancel_by_operator(job_id=job_id)) for job_id in job_ids))
    return []


def _retry_batch(job_ids: list, tally) -> list[str]:
    refusals = []
    for job_id in job_ids:  # a retry is a transaction of its own (a new job, admitted as a submission is)
        try:
            job_retry_by_operator(job_id=job_id, recorded=tally.add)
        except QuireError as exc:
            with transaction.atomic():
                tally.add(f"not retried ({exc.code})")
            refusals.append(f"{str(job_id)[:8]}: {exc.message}")
    return refusals


def cancel_outcome(job) -> str:
    """What an operator's cancellation did to a job, in the words the audit trail and the messages use."""
    if job.state == JobState.CANCELLED:
        return "cancelled"
    if job.state == JobState.RUNNING and job.cancellation_requested:
        return "running, asked to stop"
    return f"already {job.state}" if job.state in TERMINAL_STATES else f"left {job.state}"


def _outcome_words(tally) -> str:
    return ", ".join(f"{count} {outcome}" for outcome, count in sorted(tally.outcomes.items())) or "no jobs"
