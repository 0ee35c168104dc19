// A structural pass over the protobuf bytes of a model before the decoder builds any object: every
// tag, varint and length is read and checked against the bytes that remain, nested messages are
// followed to a bounded depth, and the objects the decoder would create are counted. The decoder
// (protobufjs) then runs on bytes that cannot make it read past a field, recurse without bound or
// build more objects than the limit. Cost: one linear scan (bytes fields are skipped, not read).
import protobuf from 'protobufjs';
import { OnnxError } from './errors.js';
import { FREE_OBJECTS, type OnnxLimits } from './limits.js';

/** How one field of a message type may appear on the wire. */
interface FieldRule {
  /** The wire type of one value (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
  wire: number;
  /** Repeated numeric field: may also come packed (one length-delimited run). */
  packable: boolean;
  /** Decoded as an object each (a Long for 64-bit integers, a string or a byte view). */
  object: boolean;
  /** A string: its bytes must be UTF-8 (the decoder does not check, and re-encodes bad bytes differently). */
  utf8?: boolean;
  name: string;
  msg?: TypeRules;
}
type TypeRules = { name: string; fields: Map<number, FieldRule> };

const WIRE_OF: Record<string, number> = {
  double: 1, fixed64: 1, sfixed64: 1, float: 5, fixed32: 5, sfixed32: 5,
  int32: 0, uint32: 0, sint32: 0, int64: 0, uint64: 0, sint64: 0, bool: 0, string: 2, bytes: 2,
};
const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);

const rulesCache = new Map<protobuf.Type, TypeRules>();
function rulesOf(type: protobuf.Type): TypeRules {
  let r = rulesCache.get(type);
  if (r) return r;
  r = { name: type.name, fields: new Map() };
  rulesCache.set(type, r); // before the fields: the schema's types are recursive
  for (const f of type.fieldsArray) {
    const rt = f.resolvedType;
    if (rt instanceof protobuf.Type) {
      r.fields.set(f.id, { wire: 2, packable: false, object: true, name: f.name, msg: rulesOf(rt) });
      continue;
    }
    const wire = rt instanceof protobuf.Enum ? 0 : WIRE_OF[f.type];
    r.fields.set(f.id, {
      wire, name: f.name,
      packable: f.repeated && wire !== 2,
      object: wire === 2 || LONG_TYPES.has(f.type),
      utf8: f.type === 'string',
    });
  }
  return r;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** True when data[from, to) is valid UTF-8 (ASCII checked in place; the rest by a strict decoder). */
function isUtf8(data: Uint8Array, from: number, to: number): boolean {
  let i = from;
  while (i < to && data[i] < 0x80) i++;
  if (i === to) return true;
  try {
    utf8.decode(data.subarray(i, to));
    return true;
  } catch {
    return false;
  }
}

/** What the scan found. */
export interface WireStats { objects: number; depth: number }

/**
 * Checks that `data` is a well-formed encoding of `type` within `limits`; throws OnnxError with
 * reason truncated (a field runs past the end), corrupt (bad varint, wire type or field number),
 * too_deep or too_large.
 */
export function checkWire(data: Uint8Array, type: protobuf.Type, limits: OnnxLimits): WireStats {
  let objects = 0;
  let deepest = 0;
  const budget = Math.min(limits.maxObjects, FREE_OBJECTS + Math.floor(data.length / limits.bytesPerObject));
  const truncated = (at: number, what: string): never => {
    throw new OnnxError('truncated', `the file ends inside ${what} (byte ${at} of ${data.length}): a truncated ONNX model?`);
  };
  const corrupt = (at: number, what: string): never => {
    throw new OnnxError('corrupt', `not a valid ONNX protobuf at byte ${at}: ${what}`);
  };
  /** Reads a varint of at most 10 bytes ending before `end`; returns its value (exact up to 2^53). */
  let pos = 0;
  const varint = (end: number, what: string): number => {
    const at = pos;
    let value = 0;
    let scale = 1;
    for (let i = 0; ; i++) {
      if (i === 10) corrupt(at, `a varint longer than 10 bytes in ${what}`);
      if (pos >= end) truncated(at, what);
      const b = data[pos++];
      value += (b & 0x7f) * scale;
      scale *= 128;
      if (!(b & 0x80)) return value;
    }
  };
  const countObjects = (n: number, at: number) => {
    objects += n;
    if (objects > budget) {
      throw new OnnxError('too_large', budget < limits.maxObjects
        ? `the model would decode into more than ${budget} objects from ${data.length} bytes (at byte ${at}): a file of many empty or tiny entries (limits.bytesPerObject ${limits.bytesPerObject})`
        : `the model would decode into more than ${budget} objects (at byte ${at} of ${data.length}; raise limits.maxObjects for a real model this large)`);
    }
  };

  const scan = (end: number, rules: TypeRules, depth: number): void => {
    if (depth > deepest) deepest = depth;
    while (pos < end) {
      const at = pos;
      const tag = varint(end, `a field tag of ${rules.name}`);
      if (tag > 0xffffffff) corrupt(at, `field tag ${tag} out of range in ${rules.name}`);
      const id = Math.floor(tag / 8);
      const wt = tag % 8;
      if (id === 0) corrupt(at, `field number 0 in ${rules.name}`);
      const rule = rules.fields.get(id);
      const where = rule ? `${rules.name}.${rule.name}` : `${rules.name} field ${id}`;
      if (rule && wt !== rule.wire && !(wt === 2 && rule.packable)) {
        corrupt(at, `${where} has wire type ${wt}, its type needs ${rule.wire}`);
      }
      switch (wt) {
        case 0:
          varint(end, where);
          if (rule?.object) countObjects(1, at);
          break;
        case 1:
          if (pos + 8 > end) truncated(at, where);
          pos += 8;
          if (rule?.object) countObjects(1, at);
          break;
        case 5:
          if (pos + 4 > end) truncated(at, where);
          pos += 4;
          break;
        case 2: {
          const len = varint(end, `the length of ${where}`);
          if (len > end - pos) {
            throw new OnnxError('truncated', `${where} declares ${len} bytes but only ${end - pos} remain (byte ${at} of ${data.length}): a truncated or corrupt ONNX model`);
          }
          const stop = pos + len;
          if (rule?.msg) {
            countObjects(1, at);
            if (depth + 1 > limits.maxMessageDepth) {
              throw new OnnxError('too_deep', `messages nested more than ${limits.maxMessageDepth} deep (${where} at byte ${at})`);
            }
            scan(stop, rule.msg, depth + 1);
          } else if (rule && rule.wire !== 2) {
            packed(rule, stop, where, at);
          } else if (rule?.object) {
            countObjects(1, at);
            if (rule.utf8 && !isUtf8(data, pos, stop)) corrupt(at, `${where} is not UTF-8 text`);
          }
          pos = stop;
          break;
        }
        default:
          corrupt(at, `wire type ${wt} (${wt === 3 || wt === 4 ? 'groups are not used by ONNX' : 'no such wire type'}) in ${where}`);
      }
    }
    if (pos !== end) corrupt(pos, `a field of ${rules.name} runs past its message`);
  };

  /** A packed run: whole values only, each varint ending inside the run. */
  const packed = (rule: FieldRule, stop: number, where: string, at: number) => {
    if (rule.wire === 5 || rule.wire === 1) {
      const w = rule.wire === 5 ? 4 : 8;
      if ((stop - pos) % w) corrupt(at, `packed ${where} of ${stop - pos} bytes is not a whole number of ${w}-byte values`);
      if (rule.object) countObjects((stop - pos) / w, at);
      return;
    }
    let count = 0;
    let run = 0;
    for (let p = pos; p < stop; p++) {
      if (data[p] & 0x80) {
        if (++run >= 10) corrupt(p, `a varint longer than 10 bytes in packed ${where}`);
      } else {
        run = 0;
        count++;
      }
    }
    if (run) truncated(stop, `the last value of packed ${where}`);
    if (rule.object) countObjects(count, at);
  };

  scan(data.length, rulesOf(type), 0);
  return { objects, depth: deepest };
}
