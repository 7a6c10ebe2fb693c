"""Streamlit components of the app: thin layers over :mod:`compaction` (no logic notebooks or the CLI would need).

Each module owns one part of the page and the session-state keys it uses; ``app.py`` composes them.
"""
