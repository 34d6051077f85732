"""One module per family of control operations; each registers with ``@operation``.

``control.operations.all_operations()`` imports every module here, so adding a module is all it
takes for an operation to appear in Python, over HTTP, in the OpenAPI document and in the CLI.
"""
