"""A project's history: every change to its files kept as versions, read, diffed, labelled and restored.

Every write to a file row is journalled by the database itself (``journal.py``: a trigger on the file table,
so no way of changing a file escapes it), in the writing transaction; ``folding.py`` groups the journal into
versions, each holding, per file it touched, the file's state before and after it. Text is kept at version
boundaries only (the text a file had when its version ended), so a day of typing costs one copy per version,
not one per keystroke; reading (``reading.py``), labels (``labels.py``) and restores (``restoring.py``) work on
those states.
"""
