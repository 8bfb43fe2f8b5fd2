"""Tools for the people who run Sluiceway and write plugins for it.

``sluiceway.ctl`` drives a Connect cluster over its REST API, ``sluiceway.broker_tools``
mirrors Kafka's topic and group scripts over the Kafka protocol, ``sluiceway.scaffold``
generates plugin packages and ``sluiceway.testing`` is the pytest plugin for their tests.
"""
