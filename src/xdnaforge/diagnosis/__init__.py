"""From logs to causes and fixes: the knowledge base (data/knowledge.yaml), the message
catalogue drawn from upstream sources, the classifier, the readers of tool output shapes and
the log verdict. Pure."""
