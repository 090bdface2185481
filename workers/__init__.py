"""Worker processes: consume tool calls from Redis and run them through `pwc_mcp_core`.

Rust-free: nothing imported here may load a Rust extension module.
"""
