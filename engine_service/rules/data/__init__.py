"""Data files of the rules (`kingdomino-tiles.csv`, RULES.md KD).

A package only so that setuptools ships the files in it (package-data ``*.csv``)
and `importlib.resources` finds them from a wheel, a zip or the sources.
"""
