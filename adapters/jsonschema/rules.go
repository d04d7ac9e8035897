package jsonschema

import "unicode/utf8"

// The keyword rules of the fast path, written once.
//
// The checker reads an instance in one of two forms: a Go value as a JSON
// decoder makes it (Validate; valueReader, decoded.go) or the JSON text
// itself (ValidateJSON; textReader, fastjson.go). The rules below do not
// know which: they ask a reader what a value is (its type, number,
// characters), and the reader lists the items and members of an array or
// object and hands them back to checkItems and checkMembers. Each reader
// answers from its own form without copying what it need not (the text
// reader skips a string no keyword reads and unescapes only the strings
// that one does). Where a reader cannot tell, the rules say unknown and
// the library decides, so a reader can only make the checker wrong by
// answering wrongly, never by declining.
//
// The rules are generic in the reader, and each reader lists the members
// and items of what it reads and calls the rules on them (a decoded
// object's on the stack, no pool): of the shapes measured (an interface
// value, one reader with a flag for the form, objects behind reader
// methods), this one kept both paths as fast as when each had its own
// copy of the rules.

// reader is what the rules need to know of an instance value of type V.
type reader[V any] interface {
	// kind returns the type bit of v (0 when the checker cannot tell,
	// which makes it say unknown) and, for a number, its value.
	kind(v V) (uint8, numValue)
	// text returns the characters of the string v; not ok makes it
	// unknown. The rules only read them, and not after the check.
	text(v V) ([]byte, bool)
	// truth returns the value of the boolean v.
	truth(v V) bool
	// format applies n's format to v, of type t.
	format(n *fnode, v V, t uint8) verdict
	// array is checkItems on the items of the array v, and object
	// checkMembers on the members of the object v (named as values when
	// n has propertyNames); unknown if the reader cannot list them. When
	// n.readsNamed, object may list only the members n.named names.
	array(n *fnode, v V, depth int) verdict
	object(n *fnode, v V, depth int) verdict
}

// member is one member of an object being checked.
type member[V any] struct {
	key  []byte // the name's characters
	name V      // the name as a value, for propertyNames
	val  V
}

// check is the verdict of schema n on the value v.
func check[V any, R reader[V]](r R, n *fnode, v V, depth int) verdict {
	if n == nil {
		return valid
	}
	if n.boolValue != 0 {
		if n.boolValue > 0 {
			return valid
		}
		return invalid
	}
	if depth > maxDepth {
		return unknown
	}
	t, num := r.kind(v)
	if t == 0 {
		return unknown
	}
	res := valid

	// type
	if n.types != 0 && n.types&t == 0 {
		if t == tNumber && n.types&tInteger != 0 {
			if num.isInt != valid {
				return num.isInt // invalid, or unknown
			}
		} else {
			return invalid
		}
	}
	// enum and const
	if n.hasEnum {
		if got := matchEnum(r, n.enum, v, t, num); got != valid {
			return got
		}
	}
	if n.constItem != nil {
		if got := matchEnum(r, n.constItem, v, t, num); got != valid {
			return got
		}
	}
	if n.format != nil {
		if got := r.format(n, v, t); got != valid {
			return got
		}
	}
	// $ref
	if n.ref != nil {
		res = check(r, n.ref, v, depth+1)
		if n.draft < 2019 {
			return res
		}
		if res == invalid {
			return invalid
		}
	}

	switch t {
	case tObject:
		res = and(res, r.object(n, v, depth))
	case tArray:
		res = and(res, r.array(n, v, depth))
	case tString:
		res = and(res, checkString(r, n, v))
	case tNumber:
		res = and(res, n.checkNumber(num))
	}
	if res == invalid {
		return invalid
	}
	return and(res, checkCond(r, n, v, depth))
}

func matchEnum[V any, R reader[V]](r R, items []enumItem, v V, t uint8, num numValue) verdict {
	res := invalid
	var s []byte
	if t == tString {
		var ok bool
		if s, ok = r.text(v); !ok {
			return unknown
		}
	}
	for i := range items {
		it := &items[i]
		switch t {
		case tString:
			if it.kind == tString && it.s == string(s) {
				return valid
			}
		case tBoolean:
			if it.kind == tBoolean && it.b == r.truth(v) {
				return valid
			}
		case tNull:
			if it.kind == tNull {
				return valid
			}
		case tNumber:
			if it.kind == tNumber {
				if !num.ok || !it.n.ok {
					res = unknown
				} else if it.n.f == num.f {
					return valid
				}
			}
		default: // array or object
			if it.kind == 0 {
				res = unknown
			}
		}
	}
	return res
}

func hasMember[V any](obj []member[V], key string) bool {
	for i := range obj {
		if string(obj[i].key) == key {
			return true
		}
	}
	return false
}

func hasAll[V any](obj []member[V], keys []string) bool {
	for _, k := range keys {
		if !hasMember(obj, k) {
			return false
		}
	}
	return true
}

// checkMembers is the verdict of n's object keywords on v, an object of
// size members, given obj, its members (all of them, or at least those
// that n names if n.readsNamed).
func checkMembers[V any, R reader[V]](r R, n *fnode, v V, obj []member[V], size, depth int) verdict {
	if n.minProps >= 0 && size < n.minProps {
		return invalid
	}
	if n.maxProps >= 0 && size > n.maxProps {
		return invalid
	}
	if !hasAll(obj, n.required) {
		return invalid
	}
	res := valid
	for i := range n.deps {
		d := &n.deps[i]
		if !hasMember(obj, d.prop) {
			continue
		}
		if d.sch != nil {
			if res = and(res, check(r, d.sch, v, depth+1)); res == invalid {
				return invalid
			}
		} else if !hasAll(obj, d.req) {
			return invalid
		}
	}
	if n.props != nil || n.patProps != nil || n.addlSet {
		for i := range obj {
			m := &obj[i]
			evaluated := false
			if s, ok := n.props[string(m.key)]; ok {
				evaluated = true
				if res = and(res, check(r, s, m.val, depth+1)); res == invalid {
					return invalid
				}
			}
			for j := range n.patProps {
				if n.patProps[j].match(m.key) {
					evaluated = true
					if res = and(res, check(r, n.patProps[j].sch, m.val, depth+1)); res == invalid {
						return invalid
					}
				}
			}
			if !evaluated && n.addlSet {
				if n.addl == nil {
					if !n.addlBool {
						return invalid
					}
				} else if res = and(res, check(r, n.addl, m.val, depth+1)); res == invalid {
					return invalid
				}
			}
		}
	}
	if n.draft == 4 {
		return res
	}
	if n.propNames != nil {
		for i := range obj {
			if res = and(res, check(r, n.propNames, obj[i].name, depth+1)); res == invalid {
				return invalid
			}
		}
	}
	if n.draft == 6 {
		return res
	}
	for i := range n.depSchemas {
		d := &n.depSchemas[i]
		if hasMember(obj, d.prop) {
			if res = and(res, check(r, d.sch, v, depth+1)); res == invalid {
				return invalid
			}
		}
	}
	for i := range n.depRequired {
		d := &n.depRequired[i]
		if hasMember(obj, d.prop) && !hasAll(obj, d.req) {
			return invalid
		}
	}
	return res
}

// maxUnique is the longest array whose uniqueItems the checker decides.
const maxUnique = 32

func uniqueItems[V any, R reader[V]](r R, arr []V) verdict {
	const few = 8 // the common case: scratch that costs less to clear
	if len(arr) <= few {
		var types [few]uint8
		var nums [few]float64
		var texts [few][]byte
		return unique(r, arr, types[:], nums[:], texts[:])
	}
	if len(arr) > maxUnique {
		return unknown
	}
	var types [maxUnique]uint8
	var nums [maxUnique]float64
	var texts [maxUnique][]byte
	return unique(r, arr, types[:], nums[:], texts[:])
}

// unique is uniqueItems with scratch for each item, read once: its type (0
// for a number that is not exact), a number's or a boolean's value (1 for
// true) in nums, a string's characters in texts.
func unique[V any, R reader[V]](r R, arr []V, types []uint8, nums []float64, texts [][]byte) verdict {
	var unread uint64 // strings whose characters the reader could not give
	for i, it := range arr {
		t, num := r.kind(it)
		switch t {
		case tNumber:
			if !num.ok {
				t = 0
			}
			nums[i] = num.f
		case tBoolean:
			if r.truth(it) {
				nums[i] = 1
			}
		case tString:
			s, ok := r.text(it)
			if !ok {
				unread |= 1 << i
			}
			texts[i] = s
		}
		types[i] = t
	}
	// Two items are the same if they are strings, booleans or numbers of
	// the same value, or both null; arrays and objects are not compared.
	for i := 1; i < len(arr); i++ {
		for j := range i {
			switch ti, tj := types[i], types[j]; {
			case ti == 0 || ti == tArray || ti == tObject, ti == tNumber && tj == 0:
				return unknown
			case ti != tj:
			case ti == tNull:
				return invalid
			case ti == tString:
				if unread&(1<<i|1<<j) != 0 {
					return unknown
				}
				if string(texts[i]) == string(texts[j]) {
					return invalid
				}
			case nums[i] == nums[j]:
				return invalid
			}
		}
	}
	return valid
}

func checkItems[V any, R reader[V]](r R, n *fnode, arr []V, depth int) verdict {
	if n.minItems >= 0 && len(arr) < n.minItems {
		return invalid
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		return invalid
	}
	res := valid
	if n.unique && len(arr) > 1 {
		if res = uniqueItems(r, arr); res == invalid {
			return invalid
		}
	}
	evaluated := min(len(n.tuple), len(arr))
	for i := range evaluated {
		if res = and(res, check(r, n.tuple[i], arr[i], depth+1)); res == invalid {
			return invalid
		}
	}
	if n.draft < 2020 {
		if n.items != nil {
			for _, it := range arr {
				if res = and(res, check(r, n.items, it, depth+1)); res == invalid {
					return invalid
				}
			}
			evaluated = len(arr)
		}
		if n.addlItemsSet {
			if n.addlItems == nil {
				if !n.addlItemsBool && evaluated != len(arr) {
					return invalid
				}
			} else {
				for _, it := range arr[evaluated:] {
					if res = and(res, check(r, n.addlItems, it, depth+1)); res == invalid {
						return invalid
					}
				}
			}
		}
	} else if n.items2020 != nil {
		for _, it := range arr[evaluated:] {
			if res = and(res, check(r, n.items2020, it, depth+1)); res == invalid {
				return invalid
			}
		}
	}
	if n.contains != nil {
		matched, unsure := 0, 0
		for _, it := range arr {
			switch check(r, n.contains, it, depth+1) {
			case valid:
				matched++
			case unknown:
				unsure++
			}
		}
		lo, hi := matched, matched+unsure // the true count is in [lo, hi]
		want := 1
		if n.minContains >= 0 {
			want = n.minContains
		}
		switch {
		case hi < want:
			return invalid
		case lo < want:
			res = and(res, unknown)
		}
		if n.maxContains >= 0 {
			switch {
			case lo > n.maxContains:
				return invalid
			case hi > n.maxContains:
				res = and(res, unknown)
			}
		}
	}
	return res
}

func checkString[V any, R reader[V]](r R, n *fnode, v V) verdict {
	if n.minLen < 0 && n.maxLen < 0 && n.pattern == nil {
		return valid // the characters are not read: no copy, no unescaping
	}
	s, ok := r.text(v)
	if !ok {
		return unknown
	}
	if n.minLen >= 0 || n.maxLen >= 0 {
		l := utf8.RuneCount(s)
		if n.minLen >= 0 && l < n.minLen {
			return invalid
		}
		if n.maxLen >= 0 && l > n.maxLen {
			return invalid
		}
	}
	if n.pattern != nil && !n.matchPattern(s) {
		return invalid
	}
	return valid
}

func checkCond[V any, R reader[V]](r R, n *fnode, v V, depth int) verdict {
	res := valid
	if n.not != nil {
		switch check(r, n.not, v, depth+1) {
		case valid:
			return invalid
		case unknown:
			res = unknown
		}
	}
	for _, s := range n.allOf {
		if res = and(res, check(r, s, v, depth+1)); res == invalid {
			return invalid
		}
	}
	if len(n.anyOf) > 0 {
		some := invalid
		for _, s := range n.anyOf {
			got := check(r, s, v, depth+1)
			if got == valid {
				some = valid
				break
			}
			if got == unknown {
				some = unknown
			}
		}
		if res = and(res, some); res == invalid {
			return invalid
		}
	}
	if len(n.oneOf) > 0 {
		matched := 0
		for _, s := range n.oneOf {
			switch check(r, s, v, depth+1) {
			case valid:
				matched++
			case unknown:
				return unknown
			}
		}
		if matched != 1 {
			return invalid
		}
	}
	if n.ifS != nil {
		switch check(r, n.ifS, v, depth+1) {
		case valid:
			res = and(res, check(r, n.thenS, v, depth+1))
		case invalid:
			res = and(res, check(r, n.elseS, v, depth+1))
		default:
			return unknown
		}
	}
	return res
}
