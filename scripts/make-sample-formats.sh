#!/bin/sh
# Generates the test-mode sample in the other output formats (WAV 16-bit, FLAC, Ogg Opus
# 96 kbps) from the same source as scripts/make-sample-mp3.sh: 2 s of a soft 440 Hz tone,
# mono 48 kHz. Test mode returns the one in the job's `output.format`. Run once and commit.
set -eu
cd "$(dirname "$0")/.."
src="sine=frequency=440:sample_rate=48000:duration=2"
fx="volume=0.25,afade=t=in:d=0.3,afade=t=out:st=1.7:d=0.3"
common="-fflags +bitexact -flags:a +bitexact -map_metadata -1"
for spec in "wav:-c:a pcm_s16le" "flac:-c:a flac" "opus:-c:a libopus -b:a 96k"; do
  ext=${spec%%:*}
  # shellcheck disable=SC2086
  ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "$src" -af "$fx" -ac 1 -ar 48000 \
    ${spec#*:} $common "assets/test-mode-sample.$ext"
done
ls -l assets/test-mode-sample.*
