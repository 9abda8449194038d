// The HTML deck. See deck_html.h.
#include "views/deck_html.h"

#include "figure/svg_sink.h"

namespace attnsim::app {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// An SVG document without its XML declaration, to sit inside the HTML.
std::string inline_svg(const figure::Figure& f, int width) {
  std::string svg = figure::svg_document(f, width);
  if (svg.rfind("<?xml", 0) == 0) svg.erase(0, svg.find("?>") + 2);
  return svg;
}

}  // namespace

std::string deck_html(const Deck& deck, int width) {
  std::string h = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>" + escape(deck.title) +
                  "</title>\n<style>body{margin:0;background:#222}section{height:100vh;display:flex;"
                  "align-items:center;justify-content:center}section svg{max-width:100vw;max-height:100vh;"
                  "width:auto;height:auto}</style></head><body>\n";
  for (size_t i = 0; i < deck.pages.size(); ++i)
    h += "<section id=\"s" + std::to_string(i) + "\" title=\"" + escape(deck.pages[i].title) + "\">" +
         inline_svg(deck.pages[i].figure, width) + "</section>\n";
  h += "<script>let i=0;const n=" + std::to_string(deck.pages.size()) +
       ";document.addEventListener('keydown',e=>{if(e.key==='ArrowRight'||e.key===' ')i=Math.min(n-1,i+1);"
       "else if(e.key==='ArrowLeft')i=Math.max(0,i-1);else return;"
       "document.getElementById('s'+i).scrollIntoView();e.preventDefault();});</script>\n";
  return h + "</body></html>\n";
}

}  // namespace attnsim::app
