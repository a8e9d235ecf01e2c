"""The ground floor: what every context shares and none owns.

Errors, environment, text rules, the registry of periodic chores, database helpers and HTTP helpers. It imports
no app and not ``config`` (an import-linter contract holds it); ``config`` on top composes the apps into a site.
"""
