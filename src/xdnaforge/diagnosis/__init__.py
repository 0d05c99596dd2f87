"""From logs to causes and fixes: the knowledge base (data/knowledge.yaml), the message
catalogue drawn from upstream sources, the classifier, the readers of tool output shapes, the
log verdict, and how well all that generalises to real logs it was not written from
(evaluate). Pure."""
