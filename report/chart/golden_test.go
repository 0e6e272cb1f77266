package chart

import (
	"bytes"
	"flag"
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden images in testdata from the current code")

// checkGolden compares the PNG at got with testdata/<name>_golden.png pixel by pixel, allowing a
// small per-pixel colour difference (anti-aliasing), or rewrites the golden file with -update.
// On a mismatch it keeps the new image and names it, to look at.
func checkGolden(t *testing.T, got, name string) {
	t.Helper()
	golden := filepath.Join("testdata", name+"_golden.png")
	raw, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(golden, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading golden image (run go test -update to create it): %v", err)
	}
	if bad, total := diffPNG(t, raw, want, 0.05); bad > 0 {
		t.Logf("%d of %d pixels differ", bad, total)
		keep, err := os.MkdirTemp("", "chart-golden-")
		if err != nil {
			t.Fatal(err)
		}
		kept := filepath.Join(keep, name+".png")
		if err := os.WriteFile(kept, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%s differs from %s; new image kept at %s (if the change is intended: go test -update)", name, golden, kept)
	}
}

// TestLinesGolden pins the look of the report's main kind of chart: a log latency axis with
// zeros and a gap, a shaded fault window with its label, a dashed reference line, per-endpoint
// colours with p50 dashed and p99 solid, and the legend below the data.
func TestLinesGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lines")
	if err := Lines(path, latencySpec()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, path+".png", "lines")
}

// diffPNG counts the pixels of two PNGs whose colours differ by more than delta (0 to 1, the
// largest RGBA channel difference as a fraction of full scale), the way gonum's cmpimg does;
// images of different sizes differ everywhere. (gonum.org/v1/plot/cmpimg itself needs
// rsc.io/pdf, which is not in go.mod.)
func diffPNG(t *testing.T, a, b []byte, delta float64) (bad, total int) {
	t.Helper()
	ia, ib := decodeRGBA(t, a), decodeRGBA(t, b)
	r := ia.Bounds()
	total = r.Dx() * r.Dy()
	if r != ib.Bounds() {
		return total, total
	}
	limit := int(delta * 0xff)
	for i := 0; i < len(ia.Pix); i += 4 {
		for c := range 4 {
			if d := int(ia.Pix[i+c]) - int(ib.Pix[i+c]); d > limit || -d > limit {
				bad++
				break
			}
		}
	}
	return bad, total
}

func decodeRGBA(t *testing.T, raw []byte) *image.RGBA {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("decoding png: %v", err)
	}
	if rgba, ok := img.(*image.RGBA); ok {
		return rgba
	}
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), img, img.Bounds().Min, draw.Src)
	return rgba
}
