// Package web is predictkit's web app: hand-written static files (one
// page, one style sheet, JavaScript modules) embedded into the binary, so
// that the server answers them at / with nothing to build, download or
// run beside it.
//
// The files live in static/: static/index.html is the page every client
// route of the app answers (/, /events/42, /profile...), and
// static/assets/... are the style sheet, the modules and any images,
// which the server answers under /assets/. There is no build step: what
// is in static/ is what browsers get, byte for byte, compressed on the
// way (see File).
//
// This package knows nothing of HTTP servers: Load reads a file system
// into Files, each with its content type, ETag and compressed bodies, and
// the server (package server) decides which paths answer which file and
// with which headers.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
)

//go:embed static
var files embed.FS

// Index is the name of the app's page in FS: the answer to every client
// route of the app.
const Index = "index.html"

// AssetsDir is the directory of FS whose files are the app's assets, each
// answered at "/" + its name ("/assets/app.js").
const AssetsDir = "assets"

// ContentSecurityPolicy is the policy of the page and its assets: scripts,
// styles, fonts, images and fetches (the API, the live stream) from this
// server only, images also as data: URLs; no plugins, no <base>, forms
// that post here only, and no framing. So the app has no inline script,
// no inline style attribute in its HTML, and no eval; a script injected
// into the page could neither run nor send anything elsewhere.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// FS returns the embedded app, rooted at static/: Index and the files
// under AssetsDir.
func FS() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic("web: the embedded files: " + err.Error()) // cannot happen: "static" is a valid path
	}
	return sub
}

// File is one file of the app, ready to serve.
type File struct {
	// Name is the file's path in its file system: "index.html",
	// "assets/app.js".
	Name string
	// ContentType is the Content-Type it is served with (by extension;
	// text types say charset=utf-8).
	ContentType string
	// ETag is a weak entity tag ("W/\"...\"") derived from Body: weak,
	// because the same tag stands for the plain and the compressed
	// bodies, which are the same content in different encodings.
	ETag string
	// Body is the file as it is stored.
	Body []byte

	once         sync.Once
	gzip, brotli []byte
}

// Compressed returns Body compressed with gzip and with Brotli at the
// best ratio, each nil when that does not pay (a small file, or a format
// that is compressed already, such as PNG or WOFF2). A file is
// compressed the first time it is asked for, not when it loads: at the
// best ratio that takes the whole app most of a second, which a server's
// start should not wait for.
func (f *File) Compressed() (gzipBody, brotliBody []byte) {
	f.once.Do(f.compress)
	return f.gzip, f.brotli
}

// Encoding returns the body to send to a client whose Accept-Encoding
// header is acceptEncoding, and the Content-Encoding to send with it (""
// for the plain body): Brotli before gzip, each only when the client
// accepts it (a q=0 refuses it) and the file has it.
func (f *File) Encoding(acceptEncoding string) (body []byte, contentEncoding string) {
	accepts := acceptedEncodings(acceptEncoding)
	if !accepts["br"] && !accepts["gzip"] {
		return f.Body, ""
	}
	gz, br := f.Compressed()
	switch {
	case br != nil && accepts["br"]:
		return br, "br"
	case gz != nil && accepts["gzip"]:
		return gz, "gzip"
	}
	return f.Body, ""
}

// acceptedEncodings reads an Accept-Encoding header: the codings it
// accepts, by lower-case name ("*" accepts any coding it does not name).
func acceptedEncodings(header string) map[string]bool {
	out := map[string]bool{}
	star, starSeen := false, false
	named := map[string]bool{}
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(part, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		ok := true
		for p := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(p, "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				ok = err == nil && q > 0
			}
		}
		if name == "*" {
			star, starSeen = ok, true
			continue
		}
		named[name] = true
		out[name] = ok
	}
	if starSeen {
		for _, c := range []string{"br", "gzip"} {
			if !named[c] {
				out[c] = star
			}
		}
	}
	return out
}

// Site is the app's files, loaded and compressed.
type Site struct {
	files map[string]*File
}

// ErrNoIndex: the file system has no Index, so there is no app to serve.
var ErrNoIndex = errors.New("web: no " + Index)

// Load reads every regular file of fsys (Index and anything under
// AssetsDir; other files are left out, as nothing would serve them); each
// is compressed when first asked for (File.Compressed). It fails with
// ErrNoIndex when fsys has no Index.
func Load(fsys fs.FS) (*Site, error) {
	s := &Site{files: map[string]*File{}}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || name != Index && !strings.HasPrefix(name, AssetsDir+"/") {
			return nil
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		s.files[name] = newFile(name, body)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: load the app: %w", err)
	}
	if s.files[Index] == nil {
		return nil, ErrNoIndex
	}
	return s, nil
}

// Embedded is Load(FS()), done once: the app this binary serves.
var Embedded = sync.OnceValues(func() (*Site, error) { return Load(FS()) })

// File returns the file name ("index.html", "assets/app.js"), or nil.
func (s *Site) File(name string) *File { return s.files[name] }

// Names returns the names of every file, sorted.
func (s *Site) Names() []string {
	names := make([]string, 0, len(s.files))
	for n := range s.files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// minCompress is the size under which a file is not compressed: the
// saving would not pay for a header that says so.
const minCompress = 256

func newFile(name string, body []byte) *File {
	sum := sha256.Sum256(body)
	return &File{Name: name, ContentType: ContentType(name), ETag: `W/"` + hex.EncodeToString(sum[:12]) + `"`, Body: body}
}

func (f *File) compress() {
	if len(f.Body) < minCompress || !compressible(f.ContentType) {
		return
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	_, _ = zw.Write(f.Body)
	_ = zw.Close()
	if gz.Len() < len(f.Body) {
		f.gzip = gz.Bytes()
	}
	var br bytes.Buffer
	bw := brotli.NewWriterLevel(&br, brotli.BestCompression)
	_, _ = bw.Write(f.Body)
	_ = bw.Close()
	if br.Len() < len(f.Body) {
		f.brotli = br.Bytes()
	}
}

// compressible reports whether files of type ct shrink when compressed:
// text and SVG do; images, fonts and archives are compressed already.
func compressible(ct string) bool {
	return strings.HasPrefix(ct, "text/") || strings.HasPrefix(ct, "application/json") ||
		strings.HasPrefix(ct, "application/manifest+json") || ct == "image/svg+xml" || ct == "image/x-icon"
}

// ContentType is the Content-Type of a file named name, by its extension;
// application/octet-stream for one it does not know (which browsers will
// neither run nor render, as the server sends nosniff).
func ContentType(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".json", ".map":
		return "application/json"
	case ".webmanifest":
		return "application/manifest+json"
	case ".txt":
		return "text/plain; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".webp":
		return "image/webp"
	case ".ico":
		return "image/x-icon"
	case ".woff2":
		return "font/woff2"
	case ".woff":
		return "font/woff"
	}
	return "application/octet-stream"
}
