"""Site-tree questions from the conference site's real HTML: facts, WebWalkerQA's types and difficulties, stable
ids, rejects with reasons, and the refresh that keeps, changes or retires a released question."""

from __future__ import annotations

from tests.sites import Page, Site, conference_site
from timelyqa.names import VERSIONED
from timelyqa.site_tree.facts import FACTS_PARSER, Fact, extract_facts


def facts_of(site: Site, path: str) -> list[tuple[str, str, str]]:
    return [(f.label, f.value, f.kind) for f in extract_facts(site.html(site.pages[path]))]


def test_facts_come_from_tables_definition_lists_and_labelled_fields() -> None:
    site = conference_site()
    assert VERSIONED.match(FACTS_PARSER)
    assert facts_of(site, "/registration") == [
        ("Student for Early (until 1 May 2026)", "EUR 150", "table"),
        ("Regular for Early (until 1 May 2026)", "EUR 300", "table"),
        ("Student for Late", "EUR 200", "table"), ("Regular for Late", "EUR 400", "table")]
    assert extract_facts(site.html(site.pages["/registration"]))[0].context == "Rate"
    assert facts_of(site, "/awards") == [("Award", "Best Paper", "dl"), ("Prize", "EUR 1,000", "dl"),
                                         ("Sponsor", "Nordlicht Data", "dl")]
    assert ("Submission deadline", "15 March 2026", "field") in facts_of(site, "/important-dates")
    assert extract_facts(site.html(site.pages["/important-dates"]))[0].context == "Important dates"
    assert facts_of(site, "/papers/p5") == [
        ("Title", "Answers That Expire", "dl"), ("Authors", "Lucía Romero", "dl"), ("Session", "Evaluation", "dl"),
        ("Day", "9 June 2026", "dl"), ("Time", "09:30", "dl"), ("Room", "Room 2.14", "dl")]


def test_navigation_header_footer_and_scripts_give_no_facts() -> None:
    """The same "Label: value" text is a fact in the body and nothing in the page's chrome."""
    body = ("<h2>Key dates</h2><p>Deadline:\n   1 May 2026<br>Venue: Hall A</p>"
            "<p>Note: this line is a whole sentence of prose that runs on for far more than twelve words.</p>"
            "<p>lowercase: not a label</p><p>Starts at 10:30 sharp</p><footer><p>Contact: chairs</p></footer>")
    page = Page("/x", "X", body, links=[("/a", "Deadline: 2 May 2026"), ("/b", "Venue: Hall C")],
                script_links=[("/c", "Menu: scripted")])
    html = Site("S", {"/x": page}).html(page).replace("<header>S</header>", "<header><p>Site: S</p></header>")
    assert extract_facts(html) == [Fact("Deadline", "1 May 2026", "field", "Key dates"),
                                   Fact("Venue", "Hall A", "field", "Key dates")]
    site = conference_site()
    for path in ("/", "/program/day-1", "/awards", "/papers/p1"):
        links = {text for _, text in site.pages[path].links + site.pages[path].script_links}
        assert not any(f.label in links for f in extract_facts(site.html(site.pages[path])))
