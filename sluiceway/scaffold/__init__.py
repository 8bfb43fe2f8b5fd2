"""``sluiceway new source|sink|transform NAME``: a plugin package that installs, runs and
tests as generated.

``names`` checks the name and derives the package and class names, ``render`` fills
the templates (``templates/<kind>/*.tmpl``, ``string.Template`` syntax: ``$package``,
``$connector_class``...) into files, ``cli`` is the command.
"""
