"""The news source: Wikipedia's Current Events Portal, the articles it cites on allowed outlets, questions written
from them (LiveNewsBench's way), split by event date, with a human-verified set and a longitudinal set."""
