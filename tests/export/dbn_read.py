"""A DBN reader written from the published layout (docs/specs/dbn.md), not
from wirebook's writer: the metadata and the MBO, MBP-1, MBP-10 and
trades records of DBN versions 2 and 3, zstd-compressed (through the
zstd command) or not."""
import struct
import subprocess

UNDEF_PRICE = (1 << 63) - 1
F_LAST = 0x80
RTYPE_SCHEMA = {0x00: 'trades', 0x01: 'mbp-1', 0x0a: 'mbp-10', 0xa0: 'mbo'}


def raw_bytes(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:4] == b'\x28\xb5\x2f\xfd':  # zstd frame magic
        data = subprocess.run(['zstd', '-dcq'], input=data, stdout=subprocess.PIPE,
                              check=True).stdout
    return data


def cstr(b):
    return b.split(b'\0', 1)[0].decode('ascii')


def metadata(data):
    if data[:3] != b'DBN':
        raise ValueError('not DBN')
    version = data[3]
    if version not in (2, 3):
        raise ValueError('DBN version %d: this reader knows 2 and 3' % version)
    (length,) = struct.unpack_from('<I', data, 4)
    m = {'version': version, 'length': length}
    p = 8
    m['dataset'] = cstr(data[p:p + 16])
    p += 16
    m['schema'], m['start'], m['end'], m['limit'] = struct.unpack_from('<HQQQ', data, p)
    p += 26
    m['stype_in'], m['stype_out'], m['ts_out'], n = struct.unpack_from('<BBBH', data, p)
    m['symbol_cstr_len'] = n
    p += 5 + 53  # reserved
    (schema_def,) = struct.unpack_from('<I', data, p)
    p += 4 + schema_def

    def strings(p):
        (count,) = struct.unpack_from('<I', data, p)
        p += 4
        out = [cstr(data[p + i * n:p + (i + 1) * n]) for i in range(count)]
        return out, p + count * n

    m['symbols'], p = strings(p)
    m['partial'], p = strings(p)
    m['not_found'], p = strings(p)
    (count,) = struct.unpack_from('<I', data, p)
    p += 4
    m['mappings'] = []
    for _ in range(count):
        raw = cstr(data[p:p + n])
        p += n
        (intervals,) = struct.unpack_from('<I', data, p)
        p += 4
        for _ in range(intervals):
            start, end = struct.unpack_from('<II', data, p)
            m['mappings'].append((raw, start, end, cstr(data[p + 8:p + 8 + n])))
            p += 8 + n
    if p > 8 + length:
        raise ValueError('metadata longer than its length says')
    if version >= 3 and length % 8:
        raise ValueError('version 3 metadata not padded to 8 bytes')
    return m, 8 + length


def records(data, start):
    """Each record as a dict, in file order."""
    p = start
    while p < len(data):
        size = data[p] * 4
        rtype = data[p + 1]
        if size == 0 or p + size > len(data):
            raise ValueError('bad record length at %d' % p)
        _, _, pub, inst, ts_event = struct.unpack_from('<BBHIQ', data, p)
        r = {'rtype': rtype, 'size_bytes': size, 'publisher_id': pub, 'instrument_id': inst,
             'ts_event': ts_event}
        if rtype == 0xa0:
            (r['order_id'], r['price'], r['size'], r['flags'], r['channel_id'], action, side,
             r['ts_recv'], r['ts_in_delta'], r['sequence']) = struct.unpack_from(
                 '<QqIBBccQiI', data, p + 16)
            if size != 56:
                raise ValueError('MBO record of %d bytes' % size)
        elif rtype in (0x00, 0x01, 0x0a):
            (r['price'], r['size'], action, side, r['flags'], r['depth'], r['ts_recv'],
             r['ts_in_delta'], r['sequence']) = struct.unpack_from('<qIccBBQiI', data, p + 16)
            nlevels = {0x00: 0, 0x01: 1, 0x0a: 10}[rtype]
            if size != 48 + 32 * nlevels:
                raise ValueError('rtype %#x record of %d bytes' % (rtype, size))
            r['levels'] = [struct.unpack_from('<qqIIII', data, p + 48 + 32 * i)
                           for i in range(nlevels)]
        else:
            raise ValueError('unexpected rtype %#x' % rtype)
        r['action'] = action.decode()
        r['side'] = side.decode()
        yield r
        p += size


def read(path):
    data = raw_bytes(path)
    meta, start = metadata(data)
    return meta, list(records(data, start))
