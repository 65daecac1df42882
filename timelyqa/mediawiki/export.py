"""Pages written as a MediaWiki XML export: what the API gave, kept on disk so that parsing is a stage of its own."""

from __future__ import annotations

import gzip
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from timelyqa.files import atomic_path
from timelyqa.mediawiki.dump import Page

SCHEMA = "http://www.mediawiki.org/xml/export-0.11/"


def write_export(pages: Iterable[Page], path: Path, *, wiki_url: str) -> int:
    """Stream `pages` with their revisions into a gzipped export (schema 0.11) that `DumpReader` reads back as
    it reads a dump, and return how many pages were written. The file appears only when every page is in."""
    written = 0
    with atomic_path(path) as partial, gzip.open(partial, "wt", encoding="utf-8", compresslevel=3) as out:
        out.write(f'<mediawiki xmlns="{SCHEMA}" version="0.11" xml:lang="en">\n  <siteinfo>\n'
                  f"    <base>{escape(wiki_url)}/wiki/Main_Page</base>\n"
                  '    <namespaces>\n      <namespace key="0" case="first-letter" />\n    </namespaces>\n'
                  "  </siteinfo>\n")
        for page in pages:
            out.write(f"  <page>\n    <title>{escape(page.title)}</title>\n    <ns>{page.namespace}</ns>\n"
                      f"    <id>{page.id}</id>\n")
            for rev in page.revisions:
                parent = f"      <parentid>{rev.parent_id}</parentid>\n" if rev.parent_id else ""
                sha1 = f"      <sha1>{rev.sha1}</sha1>\n" if rev.sha1 else ""
                out.write(f"    <revision>\n      <id>{rev.id}</id>\n{parent}"
                          f"      <timestamp>{rev.timestamp.strftime('%Y-%m-%dT%H:%M:%SZ')}</timestamp>\n"
                          f"      <text bytes={quoteattr(str(len(rev.text.encode())))} xml:space=\"preserve\">"
                          f"{escape(rev.text)}</text>\n{sha1}    </revision>\n")
            out.write("  </page>\n")
            written += 1
        out.write("</mediawiki>\n")
    return written
