package voiceagent

// Request bodies and non-JSON answers. Uploads: JSON, form-encoded, raw (a campaign's CSV) and
// multipart (knowledge-base files). An io.Reader is streamed (chunked), never read whole; such a
// body can be sent once only, so it is not retried (a *bytes.Reader, *bytes.Buffer or
// *strings.Reader is read into memory and can be). Downloads: a non-JSON answer (an MP3
// recording, a CSV export) is handed over unread as a *Download.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"reflect"
	"sort"
	"strings"
)

// Nullable is an optional request field that may also be sent as null (to clear it): leave the
// field nil to send nothing, NullableOf(v) to send v, Null[T]() to send null.
type Nullable[T any] struct {
	Value T
	Null  bool
}

// NullableOf answers a field sending v.
func NullableOf[T any](v T) *Nullable[T] { return &Nullable[T]{Value: v} }

// Null answers a field sending null.
func Null[T any]() *Nullable[T] { return &Nullable[T]{Null: true} }

// MarshalJSON writes null or the value.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if n.Null {
		return []byte("null"), nil
	}
	return json.Marshal(n.Value)
}

// UnmarshalJSON reads null or a value.
func (n *Nullable[T]) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		*n = Nullable[T]{Null: true}
		return nil
	}
	n.Null = false
	return json.Unmarshal(data, &n.Value)
}

// File is a file of a multipart upload: File{Reader: f, Name: "faq.pdf", ContentType: "application/pdf"}.
type File struct {
	Reader      io.Reader
	Name        string
	ContentType string
}

// MarshalJSON: a file is never JSON (it goes in a multipart body).
func (f File) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// Download is a non-JSON answer, unread: read it (it is an io.ReadCloser) and close it.
type Download struct {
	io.ReadCloser
	Status      int
	Header      map[string][]string
	ContentType string
}

type encodedBody struct {
	data        []byte    // a body that can be sent again
	stream      io.Reader // a body sent once
	contentType string
	length      int64 // -1 when unknown (streamed)
	replayable  bool
}

func (b *encodedBody) reader() io.Reader {
	if b.stream != nil {
		return b.stream
	}
	if b.data == nil {
		return nil
	}
	return bytes.NewReader(b.data)
}

func encodeBody(kind string, body any) (*encodedBody, error) {
	if kind == "" || body == nil {
		return &encodedBody{replayable: true}, nil
	}
	switch kind {
	case "json":
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		return &encodedBody{data: data, contentType: "application/json", length: int64(len(data)), replayable: true}, nil
	case "form":
		values, err := formValues(body)
		if err != nil {
			return nil, err
		}
		data := []byte(values.Encode())
		return &encodedBody{data: data, contentType: "application/x-www-form-urlencoded", length: int64(len(data)), replayable: true}, nil
	case "csv", "raw":
		reader, _ := body.(io.Reader)
		if reader == nil {
			return &encodedBody{replayable: true}, nil
		}
		contentType := "application/octet-stream"
		if kind == "csv" {
			contentType = "text/csv"
		}
		if data, ok := inMemory(reader); ok {
			return &encodedBody{data: data, contentType: contentType, length: int64(len(data)), replayable: true}, nil
		}
		return &encodedBody{stream: reader, contentType: contentType, length: -1}, nil
	case "multipart":
		return multipartBody(body)
	}
	return nil, fmt.Errorf("voiceagent: unknown body kind %q", kind)
}

// inMemory answers the bytes of a reader that holds them already (so the body can be resent).
func inMemory(r io.Reader) ([]byte, bool) {
	switch v := r.(type) {
	case *bytes.Reader, *strings.Reader, *bytes.Buffer:
		data, err := io.ReadAll(v)
		return data, err == nil
	}
	return nil, false
}

// fieldsOf lists a params struct's fields by their JSON names, skipping nil and omitted ones.
func fieldsOf(body any) ([]string, map[string]reflect.Value) {
	v := reflect.ValueOf(body)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, nil
		}
		v = v.Elem()
	}
	names, values := []string{}, map[string]reflect.Value{}
	if v.Kind() != reflect.Struct {
		return names, values
	}
	for i := 0; i < v.NumField(); i++ {
		tag := strings.Split(v.Type().Field(i).Tag.Get("json"), ",")
		field := v.Field(i)
		if tag[0] == "" || tag[0] == "-" || (field.Kind() == reflect.Pointer || field.Kind() == reflect.Interface || field.Kind() == reflect.Slice || field.Kind() == reflect.Map) && field.IsNil() {
			continue
		}
		names = append(names, tag[0])
		values[tag[0]] = field
	}
	return names, values
}

// scalarText writes a value of a form, query or multipart field.
func scalarText(v reflect.Value) (string, error) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if v.Kind() == reflect.String {
		return v.String(), nil
	}
	data, err := json.Marshal(v.Interface())
	if err != nil {
		return "", err
	}
	return strings.Trim(string(data), `"`), nil
}

func formValues(body any) (url.Values, error) {
	values := url.Values{}
	names, fields := fieldsOf(body)
	for _, name := range names {
		field := fields[name]
		items := []reflect.Value{field}
		if field.Kind() == reflect.Slice {
			items = items[:0]
			for i := 0; i < field.Len(); i++ {
				items = append(items, field.Index(i))
			}
		}
		for _, item := range items {
			text, err := scalarText(item)
			if err != nil {
				return nil, err
			}
			values.Add(name, text)
		}
	}
	return values, nil
}

// encodeQuery writes a query struct (nil pointer: no query); lists repeat their key.
func encodeQuery(query any) (string, error) {
	cursor := ""
	if next, ok := query.(withCursor); ok {
		query, cursor = next.query, next.cursor
	}
	values, err := formValues(query)
	if err != nil {
		return "", err
	}
	if cursor != "" {
		values.Set("cursor", cursor)
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := []string{}
	for _, k := range keys {
		for _, v := range values[k] {
			parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(v))
		}
	}
	return strings.Join(parts, "&"), nil
}

var fileType = reflect.TypeOf(File{})

// multipartBody writes fields and files; with a file that is a stream it is streamed through a pipe.
func multipartBody(body any) (*encodedBody, error) {
	names, fields := fieldsOf(body)
	streamed := false
	for _, name := range names {
		if f, ok := fileOf(fields[name]); ok {
			if data, held := inMemory(f.Reader); held {
				f.Reader = bytes.NewReader(data)
				fields[name] = reflect.ValueOf(f)
			} else if f.Reader != nil {
				streamed = true
			}
		}
	}
	write := func(w *multipart.Writer) error {
		for _, name := range names {
			if f, ok := fileOf(fields[name]); ok {
				header := textproto.MIMEHeader{}
				filename := f.Name
				if filename == "" {
					filename = "upload"
				}
				header.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, name, filename))
				contentType := f.ContentType
				if contentType == "" {
					contentType = "application/octet-stream"
				}
				header.Set("Content-Type", contentType)
				part, err := w.CreatePart(header)
				if err != nil {
					return err
				}
				if f.Reader != nil {
					if _, err := io.Copy(part, f.Reader); err != nil {
						return err
					}
				}
				continue
			}
			text, err := scalarText(fields[name])
			if err != nil {
				return err
			}
			if err := w.WriteField(name, text); err != nil {
				return err
			}
		}
		return w.Close()
	}
	if !streamed {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		if err := write(w); err != nil {
			return nil, err
		}
		return &encodedBody{data: buf.Bytes(), contentType: w.FormDataContentType(), length: int64(buf.Len()), replayable: true}, nil
	}
	reader, writer := io.Pipe()
	w := multipart.NewWriter(writer)
	go func() { writer.CloseWithError(write(w)) }()
	return &encodedBody{stream: reader, contentType: w.FormDataContentType(), length: -1}, nil
}

func fileOf(v reflect.Value) (File, bool) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return File{}, false
		}
		v = v.Elem()
	}
	if v.Type() == fileType {
		return v.Interface().(File), true
	}
	return File{}, false
}
