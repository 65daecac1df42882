"""The Wikipedia source: infobox changes in MediaWiki revision histories become dated questions (DailyQA)."""
