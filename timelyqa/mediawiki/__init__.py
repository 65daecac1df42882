"""What every MediaWiki-backed source shares (Wikipedia, Wikidata, news): the polite Action API client, revision
readers for the API and for XML exports and dumps, and wikitext rendered as plain text."""
