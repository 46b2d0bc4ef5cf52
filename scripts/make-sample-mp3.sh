#!/bin/sh
# Generates assets/test-mode-sample.mp3, the audio that test mode returns: 2 s of a soft
# 440 Hz tone with 0.3 s fades, mono 48 kHz, MP3 192 kbps (libmp3lame), byte-for-byte
# reproducible with the same ffmpeg/LAME build. Run once and commit the result; if it
# changes, update the constants in adapters/ffmpeg/sample.ts (duration from ffprobe).
set -eu
cd "$(dirname "$0")/.."
out=assets/test-mode-sample.mp3
mkdir -p assets
ffmpeg -hide_banner -loglevel error -nostdin -y \
  -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=2" \
  -af "volume=0.25,afade=t=in:d=0.3,afade=t=out:st=1.7:d=0.3" \
  -ac 1 -ar 48000 -c:a libmp3lame -b:a 192k \
  -fflags +bitexact -flags:a +bitexact -map_metadata -1 -id3v2_version 0 -write_id3v1 0 \
  "$out"
ffprobe -v error -show_entries format=duration,bit_rate,size -of default=noprint_wrappers=1 "$out"
