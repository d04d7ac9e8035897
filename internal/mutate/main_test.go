package main

import (
	"fmt"
	"testing"
)

const sample1 = `package p

const DefaultLimit = 30
const other = 7

func f(a, b int, err error) error {
	if err != nil {
		return err
	}
	if a < b && !(a == 0) {
		return nil
	}
	return nil
}
`

// sitesOf finds each kind of site, and a fault planted at a site is the
// text it names.
func TestSitesOf(t *testing.T) {
	sites, err := sitesOf("p.go", []byte(sample1))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sites {
		got = append(got, fmt.Sprintf("%d:%s:%q->%q", s.line, s.kind, sample1[s.off:s.end], s.repl))
	}
	want := []string{
		`3:default DefaultLimit:"30"->"60"`,
		`8:delete return:"return err"->""`,
		`7:error check:"!="->"=="`,
		`10:flip &&:"&&"->"||"`,
		`10:flip <:"<"->"<="`,
		`10:drop !:"!"->""`,
		`10:flip ==:"=="->"!="`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("sites\n got %q\nwant %q", got, want)
	}
}

// sample takes one site from each file in turn, without repeating one.
func TestSampleSpreads(t *testing.T) {
	var all []site
	for i := range 10 {
		all = append(all, site{file: "a.go", line: i}, site{file: "b.go", line: i}, site{file: "c.go", line: i})
	}
	got := sample(all, 6, 1)
	perFile := map[string]int{}
	seen := map[site]bool{}
	for _, s := range got {
		perFile[s.file]++
		if seen[s] {
			t.Fatalf("site %v twice", s)
		}
		seen[s] = true
	}
	if len(got) != 6 || perFile["a.go"] != 2 || perFile["b.go"] != 2 || perFile["c.go"] != 2 {
		t.Fatalf("sample %v", got)
	}
	if len(sample(all, 100, 1)) != len(all) {
		t.Fatal("a sample larger than the sites is not all of them")
	}
}
