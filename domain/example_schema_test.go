package domain_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/hexmcp/hexmcp/domain"
)

// TemperatureUnit is a named string type that describes its allowed values
// itself.
type TemperatureUnit string

// JSONSchema makes TemperatureUnit an enum wherever it is used.
func (TemperatureUnit) JSONSchema() json.RawMessage {
	return json.RawMessage(`{"type":"string","enum":["celsius","fahrenheit"]}`)
}

func ExampleInferInputSchema() {
	type WeatherArgs struct {
		City  string          `json:"city" description:"City name" minLength:"1"`
		Days  int             `json:"days,omitempty" description:"Forecast length" minimum:"1" maximum:"14" default:"3"`
		Units TemperatureUnit `json:"units,omitempty" default:"celsius"`
		Mode  string          `json:"mode" enum:"brief,full"`
		Tags  []string        `json:"tags,omitempty" maxItems:"5"`
		Debug *bool           `json:"debug"`
	}
	schema, err := domain.InferInputSchema(reflect.TypeFor[WeatherArgs]())
	if err != nil {
		fmt.Println(err)
		return
	}
	// The schema is compact JSON; indent it to show it.
	var out bytes.Buffer
	if err := json.Indent(&out, schema, "", "  "); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.String())
	// Output:
	// {
	//   "type": "object",
	//   "properties": {
	//     "city": {
	//       "type": "string",
	//       "description": "City name",
	//       "minLength": 1
	//     },
	//     "days": {
	//       "type": "integer",
	//       "description": "Forecast length",
	//       "default": 3,
	//       "minimum": 1,
	//       "maximum": 14
	//     },
	//     "units": {
	//       "type": "string",
	//       "enum": [
	//         "celsius",
	//         "fahrenheit"
	//       ],
	//       "default": "celsius"
	//     },
	//     "mode": {
	//       "type": "string",
	//       "enum": [
	//         "brief",
	//         "full"
	//       ]
	//     },
	//     "tags": {
	//       "type": "array",
	//       "items": {
	//         "type": "string"
	//       },
	//       "maxItems": 5
	//     },
	//     "debug": {
	//       "type": "boolean"
	//     }
	//   },
	//   "required": [
	//     "city",
	//     "mode"
	//   ],
	//   "additionalProperties": false
	// }
}
