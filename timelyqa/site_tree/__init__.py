"""Questions from crawled website trees, as WebWalkerQA makes them: facts from pages, questions, and their refresh."""
