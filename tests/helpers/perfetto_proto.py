"""A protobuf reader of our own for the Perfetto traces sim.export_perfetto
writes (field numbers from Perfetto's protos/perfetto/trace/{trace_packet,
track_event/track_event,track_event/track_descriptor}.proto): the tracks
and events of a file, and the slices of a track, checked to nest."""
import struct

# TracePacket / TrackDescriptor / TrackEvent field numbers (Perfetto's protos)
PACKET, TIMESTAMP, SEQ_ID, TRACK_EVENT, TRACK_DESCRIPTOR = 1, 8, 10, 11, 60
D_UUID, D_NAME, D_PROCESS, D_THREAD, D_PARENT, D_COUNTER = 1, 2, 3, 4, 5, 8
E_TYPE, E_TRACK, E_NAME, E_VALUE, E_FLOW, E_END_FLOW = 9, 11, 23, 30, 47, 48
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4


def fields(buf):
    """(field number, value) of a protobuf message: ints for varints and
    fixed64, bytes for length-delimited fields."""
    out, i = [], 0
    while i < len(buf):
        key, i = varint(buf, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 1:
            v, i = struct.unpack_from("<Q", buf, i)[0], i + 8
        elif wire == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
            assert i <= len(buf), "a length past the end"
        else:
            raise AssertionError(f"wire type {wire}")
        out.append((num, v))
    return out


def varint(buf, i):
    shift = n = 0
    while True:
        b = buf[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def signed(n):
    return n - (1 << 64) if n >= 1 << 63 else n


def decode(path):
    """The descriptors by uuid and the events in file order."""
    tracks, events = {}, []
    for num, packet in fields(path.read_bytes()):
        assert num == PACKET
        p = dict()
        for n, v in fields(packet):
            p.setdefault(n, []).append(v)
        assert p[SEQ_ID] == [1]
        if TRACK_DESCRIPTOR in p:
            d = {}
            for n, v in fields(p[TRACK_DESCRIPTOR][0]):
                d.setdefault(n, []).append(v)
            tracks[d[D_UUID][0]] = d
        else:
            e = {}
            for n, v in fields(p[TRACK_EVENT][0]):
                e.setdefault(n, []).append(v)
            events.append((p[TIMESTAMP][0], e))
    return tracks, events


def slices(events, track):
    """(name, begin, end, depth) of the slices of a track, checking that
    they nest: an END closes the latest open BEGIN."""
    out, stack = [], []
    for t, e in events:
        if e[E_TRACK][0] != track:
            continue
        kind = e[E_TYPE][0]
        if kind == BEGIN:
            stack.append((e[E_NAME][0].decode(), t))
        elif kind == END:
            assert stack, f"an END with no open slice on track {track} at {t}"
            name, begin = stack.pop()
            assert t >= begin
            out.append((name, begin, t, len(stack)))
    assert not stack, f"slices left open on track {track}: {stack}"
    return out
