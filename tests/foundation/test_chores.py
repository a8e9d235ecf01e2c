"""Each context registers its own periodic chores when its app is ready; the registry lists them by name."""

from foundation import chores


def test_collaboration_and_workspace_register_their_chores_when_ready():
    assert {"documents", "workspace"} <= dict(chores.chores_registered()).keys()


def test_chores_are_listed_by_name_whichever_registered_first(monkeypatch):
    monkeypatch.setattr(chores, "_chores", {})

    chores.chore_register(name="zebra", chore=dict)
    chores.chore_register(name="aardvark", chore=dict)

    assert [name for name, _ in chores.chores_registered()] == ["aardvark", "zebra"]


def test_registering_a_name_again_replaces_its_chore(monkeypatch):
    monkeypatch.setattr(chores, "_chores", {})
    chores.chore_register(name="tidy", chore=lambda: {"old": 1})

    chores.chore_register(name="tidy", chore=lambda: {"new": 1})

    assert [chore() for _, chore in chores.chores_registered()] == [{"new": 1}]
