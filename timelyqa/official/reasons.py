"""Why a recipe is refused, why a resolution failed, and why a repair was held: the official source's reasons."""

from __future__ import annotations

from timelyqa.reasons import Reason


class RecipeReject(Reason):
    RECIPE_INVALID = "recipe_invalid", "the recipe file is not a valid recipe of format v1 (the detail names the field)"
    RECIPE_DUPLICATE = "recipe_duplicate", "another recipe file already has this recipe's id"
    WORKFLOW_NOT_ALLOWED = ("workflow_not_allowed",
                            "the recipe runs Python code, and the operator did not opt in to trusted workflows")


class Failure(Reason):
    """Why a recipe gave no answer at one evaluation clock: never a guessed answer (RT-QA forbids fallbacks)."""

    SITE_DOWN = "site_down", "the site did not answer, or answered with a server error (5xx)"
    PAGE_MISSING = "page_missing", "the site answered the page's URL with a client error (4xx)"
    ROBOTS_DISALLOWED = "robots_disallowed", "the site's robots.txt forbids the page, so it was not fetched"
    HOST_NOT_ALLOWED = ("host_not_allowed",
                        "the page is on, or redirected to, a host the recipe does not name, which was not followed")
    NOT_HTML = "not_html", "the page is not HTML (nor XML), so no selector applies"
    EXTRACTED_NOTHING = "extracted_nothing", "the selector matched nothing on the page (usually a layout change)"
    VALUE_INVALID = "value_invalid", "the value is not of the recipe's type, or lies outside its valid range"
    NOT_LIVE_CLOCK = ("not_live_clock",
                      "the page shows only the present (no date in its URL), and the clock is far from now")
    EXTRACT_LIMIT = ("extract_limit",
                     "reading the value took more than a recipe may: its selector or regex ran past the time or memory "
                     "limit, or the page is over the size a recipe reads")
    EXTRACT_ERROR = "extract_error", "the selector or regex raised an error on the page (the detail says which)"
    WORKFLOW_FAILED = "workflow_failed", "the trusted Python workflow exited with an error or printed no answer"
    WORKFLOW_TIMEOUT = "workflow_timeout", "the trusted Python workflow ran past its time limit"
    WORKFLOW_SANDBOX_UNAVAILABLE = ("workflow_sandbox_unavailable",
                                    "bubblewrap is missing or cannot start here (user namespaces refused), so the "
                                    "trusted workflow was not run: workflows never run outside the sandbox")


class Health(Reason):
    RECIPE_BROKEN = ("recipe_broken",
                     "the recipe failed on every daily check of the last N days: out of the test split until repaired")


def reason_of(value: str) -> Reason:
    """The member a resolution's `reason` names (answers.parquet holds it as text): a failure, or a recipe refusal."""
    for family in (Failure, RecipeReject, Health):
        if value in family._value2member_map_:
            return family(value)
    raise ValueError(f"{value!r} is no reason of the official source")
