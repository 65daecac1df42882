"""Release folders, dataset cards and the Hub client."""
