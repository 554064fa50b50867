"""The two ways clients reach the protocol core: Streamable HTTP and stdio."""
