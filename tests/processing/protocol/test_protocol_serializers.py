"""Worker request shapes build their fields once per thread; every request still gets its own verdict."""

import threading

from processing.protocol.serializers import DeliverySerializer, RequestOnlySerializer

GOOD = {"request_id": "delivery-0001", "diagnostics": {"log": "ok", "entries": []},
        "offers": [{"operation": "test.echo/v1", "permits": 1}], "max_claims": 1}  # fmt: skip
BAD_ENTRY = {**GOOD, "diagnostics": {"entries": [{"severity": "fatal", "message": "m"}]}}


def _verdict(payload: dict) -> tuple[bool, dict]:
    serializer = DeliverySerializer(data=payload)
    valid = serializer.is_valid()
    return valid, (dict(serializer.validated_data) if valid else serializer.errors)


def test_requests_of_one_shape_on_one_thread_share_its_fields_and_other_shapes_or_threads_do_not():
    first, second = DeliverySerializer(data=GOOD), DeliverySerializer(data=BAD_ENTRY)
    elsewhere = []
    thread = threading.Thread(target=lambda: elsewhere.append(DeliverySerializer(data=GOOD).fields))
    thread.start()
    thread.join()

    assert first.fields is second.fields
    assert RequestOnlySerializer(data=GOOD).fields is not first.fields
    assert elsewhere[0] is not first.fields


def test_an_invalid_request_between_valid_ones_gets_its_own_errors_and_leaves_none_behind():
    valid_before, _ = _verdict(GOOD)
    invalid, errors = _verdict(BAD_ENTRY)
    valid_after, data = _verdict({**GOOD, "request_id": "delivery-0002"})

    assert valid_before and valid_after and not invalid
    assert "severity" in errors["diagnostics"]["entries"][0]
    assert data["request_id"] == "delivery-0002" and data["diagnostics"]["log"] == "ok"


def test_threads_validating_at_once_each_get_the_verdict_of_their_own_request():
    start = threading.Barrier(4, timeout=10)
    wrong = []

    def validate(index: int):
        start.wait()
        for number in range(200):
            request_id = f"delivery-{index}-{number:04d}"
            if (index + number) % 3 == 0:
                valid, _ = _verdict({**BAD_ENTRY, "request_id": request_id})
                if valid:
                    wrong.append((request_id, "accepted"))
            else:
                valid, data = _verdict({**GOOD, "request_id": request_id})
                if not valid or data["request_id"] != request_id:
                    wrong.append((request_id, data))

    threads = [threading.Thread(target=validate, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert wrong == []
