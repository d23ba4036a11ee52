"""A small, real, deterministic MP4 (H.264) for the seed's videos, written without a codec library.

The seed points video images at ``/__emulator/media/<uid>.mp4`` with a width, a height and a
duration; a browser's ``<video>`` must be able to play what is served there. No encoder is
installed (and one would be a large dependency for a placeholder), so this module writes the
bitstream itself, using only the simplest tools H.264 offers:

- the first frame is an IDR picture whose every macroblock is ``I_PCM`` (raw samples, no
  prediction, no transform): the procedural picture of the path, exactly;
- every later frame (one a second) is a P picture whose macroblocks are all skipped, so it
  repeats the first frame and costs a few bytes;
- Constrained Baseline profile (what every H.264 decoder plays), CAVLC, 4:2:0, frame cropping
  for sizes that are not a multiple of 16, no deblocking, POC type 2;
- the container is ISO BMFF with the ``moov`` box first (playable while it downloads).

So a 1280 x 720 video is about 1.4 MB whatever its duration (384 bytes a macroblock).
"""

from __future__ import annotations

import math
import struct

from PIL import Image

TIMESCALE = 1000         # ticks a second (milliseconds)
FRAME_TICKS = 1000       # one frame a second: a still picture needs no more
MAX_SIDE = 4096
LOG2_MAX_FRAME_NUM = 8   # frame_num is 8 bits wide (log2_max_frame_num_minus4 = 4)


class _Bits:
    """An RBSP bit writer (u(n), ue(v), se(v)) with the trailing bits."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def u(self, bits: int, value: int) -> None:
        for shift in range(bits - 1, -1, -1):
            self.acc = (self.acc << 1) | ((value >> shift) & 1)
            self.n += 1
            if self.n == 8:
                self.out.append(self.acc)
                self.acc = self.n = 0

    def ue(self, value: int) -> None:
        code = value + 1
        self.u(2 * code.bit_length() - 1, code)

    def se(self, value: int) -> None:
        self.ue(2 * value - 1 if value > 0 else -2 * value)

    def align_zero(self) -> None:
        while self.n:
            self.u(1, 0)

    def raw(self, data: bytes) -> None:
        assert self.n == 0
        self.out += data

    def trailing(self) -> bytes:
        self.u(1, 1)
        self.align_zero()
        return bytes(self.out)


def _nal(ref_idc: int, unit_type: int, rbsp: bytes) -> bytes:
    """A NAL unit: header byte, then the RBSP with emulation-prevention bytes inserted."""
    out = bytearray([(ref_idc << 5) | unit_type])
    zeros = 0
    for byte in rbsp:
        if zeros >= 2 and byte <= 3:
            out.append(3)
            zeros = 0
        out.append(byte)
        zeros = zeros + 1 if byte == 0 else 0
    return bytes(out)


def _level(macroblocks: int) -> int:
    # The smallest level whose MaxFS holds the frame (3.1: 3600, 4.0: 8192, 5.1: 36864).
    return 31 if macroblocks <= 3600 else 40 if macroblocks <= 8192 else 51


def _sps(mb_w: int, mb_h: int, width: int, height: int) -> bytes:
    b = _Bits()
    b.u(8, 66)                        # profile_idc: Baseline
    b.u(8, 0xC0)                      # constraint_set0 and set1: Constrained Baseline
    b.u(8, _level(mb_w * mb_h))
    b.ue(0)                           # seq_parameter_set_id
    b.ue(LOG2_MAX_FRAME_NUM - 4)
    b.ue(2)                           # pic_order_cnt_type 2: output order is decoding order
    b.ue(1)                           # max_num_ref_frames
    b.u(1, 0)                         # gaps_in_frame_num_value_allowed_flag
    b.ue(mb_w - 1)
    b.ue(mb_h - 1)
    b.u(1, 1)                         # frame_mbs_only_flag
    b.u(1, 1)                         # direct_8x8_inference_flag
    crop_right, crop_bottom = (mb_w * 16 - width) // 2, (mb_h * 16 - height) // 2
    if crop_right or crop_bottom:
        b.u(1, 1)
        for offset in (0, crop_right, 0, crop_bottom):  # in 2-sample units (4:2:0)
            b.ue(offset)
    else:
        b.u(1, 0)
    b.u(1, 0)                         # vui_parameters_present_flag
    return _nal(3, 7, b.trailing())


def _pps() -> bytes:
    b = _Bits()
    b.ue(0)                           # pic_parameter_set_id
    b.ue(0)                           # seq_parameter_set_id
    b.u(1, 0)                         # entropy_coding_mode_flag: CAVLC
    b.u(1, 0)                         # bottom_field_pic_order_in_frame_present_flag
    b.ue(0)                           # num_slice_groups_minus1
    b.ue(0)                           # num_ref_idx_l0_default_active_minus1
    b.ue(0)                           # num_ref_idx_l1_default_active_minus1
    b.u(1, 0)                         # weighted_pred_flag
    b.u(2, 0)                         # weighted_bipred_idc
    b.se(0)                           # pic_init_qp_minus26
    b.se(0)                           # pic_init_qs_minus26
    b.se(0)                           # chroma_qp_index_offset
    b.u(1, 1)                         # deblocking_filter_control_present_flag
    b.u(1, 0)                         # constrained_intra_pred_flag
    b.u(1, 0)                         # redundant_pic_cnt_present_flag
    return _nal(3, 8, b.trailing())


def _planes(image: Image.Image, width: int, height: int) -> tuple[bytes, bytes, bytes, int]:
    """Y, Cb, Cr planes padded to whole macroblocks, in video range (16-235 / 16-240), and the padded width."""
    mb_w, mb_h = -(-width // 16), -(-height // 16)
    padded = Image.new("RGB", (mb_w * 16, mb_h * 16))
    padded.paste(image.convert("RGB").resize((width, height)), (0, 0))
    y, cb, cr = padded.convert("YCbCr").split()
    # PIL's YCbCr is full range; decoders read an untagged stream as video range. Samples stay >= 16.
    y = y.point(lambda v: 16 + (v * 219 + 127) // 255)
    cb, cr = (c.resize((mb_w * 8, mb_h * 8), Image.Resampling.BOX).point(lambda v: 16 + (v * 224 + 127) // 255)
              for c in (cb, cr))
    return y.tobytes(), cb.tobytes(), cr.tobytes(), mb_w * 16


def _idr_slice(image: Image.Image, width: int, height: int) -> bytes:
    mb_w, mb_h = -(-width // 16), -(-height // 16)
    y, cb, cr, stride = _planes(image, width, height)
    cstride = stride // 2
    b = _Bits()
    b.ue(0)                           # first_mb_in_slice
    b.ue(7)                           # slice_type: I (every slice of the picture)
    b.ue(0)                           # pic_parameter_set_id
    b.u(LOG2_MAX_FRAME_NUM, 0)        # frame_num
    b.ue(0)                           # idr_pic_id
    b.u(1, 0)                         # no_output_of_prior_pics_flag
    b.u(1, 0)                         # long_term_reference_flag
    b.se(0)                           # slice_qp_delta
    b.ue(1)                           # disable_deblocking_filter_idc: off
    for my in range(mb_h):
        for mx in range(mb_w):
            b.ue(25)                  # mb_type I_PCM
            b.align_zero()            # pcm_alignment_zero_bit
            block = bytearray()
            for row in range(my * 16, my * 16 + 16):
                block += y[row * stride + mx * 16: row * stride + mx * 16 + 16]
            for plane in (cb, cr):
                for row in range(my * 8, my * 8 + 8):
                    block += plane[row * cstride + mx * 8: row * cstride + mx * 8 + 8]
            b.raw(bytes(block))
    return _nal(3, 5, b.trailing())


def _skip_slice(frame_num: int, macroblocks: int) -> bytes:
    b = _Bits()
    b.ue(0)                           # first_mb_in_slice
    b.ue(5)                           # slice_type: P (every slice of the picture)
    b.ue(0)                           # pic_parameter_set_id
    b.u(LOG2_MAX_FRAME_NUM, frame_num % (1 << LOG2_MAX_FRAME_NUM))
    b.u(1, 0)                         # num_ref_idx_active_override_flag
    b.u(1, 0)                         # ref_pic_list_modification_flag_l0
    b.u(1, 0)                         # adaptive_ref_pic_marking_mode_flag
    b.se(0)                           # slice_qp_delta
    b.ue(1)                           # disable_deblocking_filter_idc
    b.ue(macroblocks)                 # mb_skip_run: every macroblock repeats the reference
    return _nal(3, 1, b.trailing())


# --- ISO BMFF --------------------------------------------------------------------------------

def _box(kind: bytes, *parts: bytes) -> bytes:
    body = b"".join(parts)
    return struct.pack(">I", 8 + len(body)) + kind + body


def _full(kind: bytes, version: int, flags: int, *parts: bytes) -> bytes:
    return _box(kind, struct.pack(">I", (version << 24) | flags), *parts)


_MATRIX = struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)


def _moov(width: int, height: int, sps: bytes, pps: bytes, sizes: list[int], deltas: list[int],
          data_offset: int) -> bytes:
    duration = sum(deltas)
    mvhd = _full(b"mvhd", 0, 0, struct.pack(">IIII", 0, 0, TIMESCALE, duration), struct.pack(">IH", 0x10000, 0x100),
                 bytes(10), _MATRIX, bytes(24), struct.pack(">I", 2))
    tkhd = _full(b"tkhd", 0, 3, struct.pack(">IIIII", 0, 0, 1, 0, duration), bytes(8), struct.pack(">hhhH", 0, 0, 0, 0),
                 _MATRIX, struct.pack(">II", width << 16, height << 16))
    mdhd = _full(b"mdhd", 0, 0, struct.pack(">IIIIHH", 0, 0, TIMESCALE, duration, 0x55C4, 0))  # language "und"
    hdlr = _full(b"hdlr", 0, 0, struct.pack(">I", 0), b"vide", bytes(12), b"blockkit video\0")
    avcc = _box(b"avcC", bytes([1, sps[1], sps[2], sps[3], 0xFF, 0xE1]), struct.pack(">H", len(sps)), sps,
                bytes([1]), struct.pack(">H", len(pps)), pps)
    avc1 = _box(b"avc1", bytes(6), struct.pack(">H", 1), bytes(16), struct.pack(">HH", width, height),
                struct.pack(">III", 0x480000, 0x480000, 0), struct.pack(">H", 1), bytes(32),
                struct.pack(">Hh", 0x18, -1), avcc)
    stts_entries: list[tuple[int, int]] = []
    for delta in deltas:
        if stts_entries and stts_entries[-1][1] == delta:
            stts_entries[-1] = (stts_entries[-1][0] + 1, delta)
        else:
            stts_entries.append((1, delta))
    stbl = _box(
        b"stbl",
        _full(b"stsd", 0, 0, struct.pack(">I", 1), avc1),
        _full(b"stts", 0, 0, struct.pack(">I", len(stts_entries)), *(struct.pack(">II", c, d) for c, d in stts_entries)),
        _full(b"stss", 0, 0, struct.pack(">II", 1, 1)),
        _full(b"stsc", 0, 0, struct.pack(">IIII", 1, 1, len(sizes), 1)),
        _full(b"stsz", 0, 0, struct.pack(">II", 0, len(sizes)), *(struct.pack(">I", s) for s in sizes)),
        _full(b"stco", 0, 0, struct.pack(">II", 1, data_offset)),
    )
    minf = _box(b"minf", _full(b"vmhd", 0, 1, bytes(8)),
                _box(b"dinf", _full(b"dref", 0, 0, struct.pack(">I", 1), _full(b"url ", 0, 1))), stbl)
    return _box(b"moov", mvhd, _box(b"trak", tkhd, _box(b"mdia", mdhd, hdlr, minf)))


def mp4(image: Image.Image, duration_seconds: float) -> bytes:
    """An MP4 showing ``image`` (its own size, rounded up to even) for ``duration_seconds`` (at least 1 ms)."""
    width = min(MAX_SIDE, image.width + image.width % 2)
    height = min(MAX_SIDE, image.height + image.height % 2)
    mb_w, mb_h = -(-width // 16), -(-height // 16)
    sps, pps = _sps(mb_w, mb_h, width, height), _pps()
    total = max(1, round(duration_seconds * TIMESCALE))
    frames = max(1, math.ceil(total / FRAME_TICKS))
    deltas = [FRAME_TICKS] * (frames - 1) + [total - FRAME_TICKS * (frames - 1)]
    samples = [_idr_slice(image, width, height)] + [_skip_slice(n, mb_w * mb_h) for n in range(1, frames)]
    samples = [struct.pack(">I", len(s)) + s for s in samples]  # AVCC: 4-byte lengths (avcC says 3 + 1)
    ftyp = _box(b"ftyp", b"isom", struct.pack(">I", 0x200), b"isom", b"iso2", b"avc1", b"mp41")
    sizes = [len(s) for s in samples]
    moov_size = len(_moov(width, height, sps, pps, sizes, deltas, 0))
    moov = _moov(width, height, sps, pps, sizes, deltas, len(ftyp) + moov_size + 8)
    return ftyp + moov + _box(b"mdat", *samples)
