"""MirrorMaker 2's dedicated mode: ``sluiceway mirror-maker mm2.properties [--clusters A B]``
(Kafka's ``connect-mirror-maker.sh``) runs a distributed Connect worker per replication
flow, against the flow's target cluster, with the three MirrorMaker connectors."""
