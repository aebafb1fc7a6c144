"""A pool's tools, from listing to what the model is offered: ``naming`` (provider-safe names,
filters), ``build`` (LangChain tools built once per listing version), ``refs`` (option keys
resolved to tools), ``bind`` (the tools a face offers, bound to their options), ``search`` (tool
search over ``bm25``)."""
