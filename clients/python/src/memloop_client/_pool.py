"""The client's private descriptor pool.

The generated stubs register `memloop.v1` here instead of in protobuf's process-wide default pool,
so this client works in a process that also loads the services' stubs or another client version
(the default pool refuses two different definitions of one file). The well-known types the
contracts import are copied in first, from the protobuf runtime.
"""

from __future__ import annotations

from google.protobuf import any_pb2, descriptor_pool, duration_pb2, struct_pb2, timestamp_pb2

POOL = descriptor_pool.DescriptorPool()
for _module in (any_pb2, duration_pb2, struct_pb2, timestamp_pb2):
    POOL.AddSerializedFile(_module.DESCRIPTOR.serialized_pb)
