package porttest

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hexmcp/hexmcp/ports"
)

// TestAddressedBus checks the addressing of buses made by newBus (as for
// [TestBus], two instances at least) that implement [ports.AddressedBus]: a
// notice with an empty To reaches every subscription, those made with
// SubscribeAs and with Subscribe; one addressed to a name reaches the
// subscriptions made as that name only, on whichever bus they were made,
// with every field intact (To included), and a notice addressed to a name
// nobody subscribed as reaches nobody; several subscriptions as one name
// each get it; a name whose subscriptions all stopped gets nothing, and
// gets its notices again once subscribed anew.
func TestAddressedBus(t *testing.T, newBus func(t *testing.T) []ports.AddressedBus) {
	bs := twoOrMore(t, newBus)
	a, a2, b, plain := &collector{}, &collector{}, &collector{}, &collector{}
	defer bs[0].SubscribeAs("inst-a", a.fn)()
	defer bs[0].SubscribeAs("inst-a", a2.fn)()
	defer bs[1].SubscribeAs("inst-b", b.fn)()
	defer bs[1].Subscribe(plain.fn)()
	for p, pub := range bs {
		sfx := "-" + strconv.Itoa(p)
		sent := []ports.Notice{
			{Kind: ports.NoticeToolsChanged, ID: "all" + sfx, Origin: "o"},
			{Kind: ports.NoticeClientResponse, ID: "to-b" + sfx, Origin: "o", To: "inst-b", Session: "s", Data: []byte(`{"jsonrpc":"2.0","id":"x-1","result":{}}`)},
			{Kind: ports.NoticeClientResponse, ID: "to-a" + sfx, Origin: "o", To: "inst-a", Session: "s", Data: []byte{}},
			{Kind: ports.NoticeClientResponse, ID: "to-nobody" + sfx, Origin: "o", To: "inst-c", Session: "s"},
			{Kind: ports.NoticeToolsChanged, ID: "last" + sfx, Origin: "o"},
		}
		for _, n := range sent {
			publish(t, pub, n)
		}
		want := map[*collector][]string{
			a:     {"all" + sfx, "to-a" + sfx, "last" + sfx},
			a2:    {"all" + sfx, "to-a" + sfx, "last" + sfx},
			b:     {"all" + sfx, "to-b" + sfx, "last" + sfx},
			plain: {"all" + sfx, "last" + sfx},
		}
		names := map[*collector]string{a: "inst-a", a2: "inst-a (second)", b: "inst-b", plain: "a subscription without name"}
		for c, ids := range want {
			// the last notice of the publisher came: the others did too,
			// or never will
			got := c.waitID(t, names[c], "last"+sfx)
			var gotIDs []string
			for _, n := range got {
				if strings.HasSuffix(n.ID, sfx) {
					gotIDs = append(gotIDs, n.ID)
				}
			}
			if !slices.Equal(gotIDs, ids) {
				t.Fatalf("published on bus %d: %s got %v, want %v", p, names[c], gotIDs, ids)
			}
			for _, n := range got {
				for _, s := range sent {
					if s.ID == n.ID && !reflect.DeepEqual(n, s) {
						t.Fatalf("%s got %s, want %s", names[c], describeNotice(n), describeNotice(s))
					}
				}
			}
		}
	}

	// A name whose every subscription stopped gets nothing, and its
	// notices again once subscribed anew.
	c := &collector{}
	stop := bs[1].SubscribeAs("inst-d", c.fn)
	publish(t, bs[0], ports.Notice{Kind: ports.NoticeToolsChanged, ID: "d-0", Origin: "o", To: "inst-d"})
	c.waitID(t, "inst-d", "d-0")
	stop()
	publish(t, bs[0], ports.Notice{Kind: ports.NoticeToolsChanged, ID: "d-1", Origin: "o", To: "inst-d"})
	publish(t, bs[0], ports.Notice{Kind: ports.NoticeToolsChanged, ID: "d-2", Origin: "o"})
	plain.waitID(t, "a subscription without name", "d-2")
	again := &collector{}
	defer bs[1].SubscribeAs("inst-d", again.fn)()
	publish(t, bs[0], ports.Notice{Kind: ports.NoticeToolsChanged, ID: "d-3", Origin: "o", To: "inst-d"})
	got := again.waitID(t, "inst-d subscribed anew", "d-3")
	if hasID(got, "d-1") || hasID(c.notices(), "d-1") {
		t.Fatal("a notice addressed to a name without subscription was delivered")
	}
}

// TestBusSizeLimit checks the size bound of buses made by newBus (as for
// [TestBus]): a notice whose Data is maxNoticeBytes less 512 bytes, with
// short other fields, is carried intact (a bus may count its fields and some
// overhead against the bound); one whose Data alone is over maxNoticeBytes
// is refused with an error wrapping [ports.ErrNoticeTooLarge] and reaches
// nobody.
func TestBusSizeLimit(t *testing.T, maxNoticeBytes int, newBus func(t *testing.T) []ports.NotificationBus) {
	if maxNoticeBytes <= 512 {
		t.Fatalf("TestBusSizeLimit needs a bound over 512 bytes, got %d", maxNoticeBytes)
	}
	bs := twoOrMore(t, newBus)
	c := &collector{}
	defer bs[1].Subscribe(c.fn)()
	fits := ports.Notice{Kind: ports.NoticeClientResponse, ID: "fits", Origin: "o", Session: "s", Data: bigData(maxNoticeBytes-512, 2)}
	over := ports.Notice{Kind: ports.NoticeClientResponse, ID: "over", Origin: "o", Session: "s", Data: bigData(maxNoticeBytes+1, 3)}
	if err := bs[0].Publish(ctx, over); !errors.Is(err, ports.ErrNoticeTooLarge) {
		t.Fatalf("Publish of %d bytes of Data, the bound being %d: %v, want an error wrapping ports.ErrNoticeTooLarge", len(over.Data), maxNoticeBytes, err)
	}
	publish(t, bs[0], fits)
	got := c.waitID(t, "a notice within the bound", "fits")
	if hasID(got, "over") {
		t.Fatal("the refused notice was delivered")
	}
	for _, n := range got {
		if n.ID == "fits" && !reflect.DeepEqual(n, fits) {
			t.Fatalf("got %s, want %s (or its Data differs)", describeNotice(n), describeNotice(fits))
		}
	}
}
